package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// walkthroughMarker precedes the README's sandbox walk-through block.
const walkthroughMarker = "<!-- walkthrough:"

// readmeWalkthrough returns the shell block after the marker in README.md.
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), walkthroughMarker)
	if !ok {
		t.Fatalf("README.md has no %q marker", walkthroughMarker)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```sh block after the walkthrough marker")
	}
	return block
}

// TestReadmeWalkthrough runs the README's sandbox walk-through, as written,
// with bash and curl against `wagraph serve --sandbox` started with the
// README's admin token; only the listen address is the test's own.
func TestReadmeWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: run make deps", tool)
		}
	}
	script := readmeWalkthrough(t)
	const token = "sandbox-walkthrough-token-0123456789"
	if !strings.Contains(script, "TOKEN="+token) {
		t.Fatalf("the walk-through does not use the token the README exports (%s)", token)
	}
	srv := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": token},
		append([]string{"--sandbox", "--addr", "127.0.0.1:0"}, storeArgs(t)...)...)
	if !strings.Contains(firstLine(srv.stderr.String()), "sandbox") {
		t.Errorf("the first log line does not say sandbox: %q", firstLine(srv.stderr.String()))
	}
	script = strings.ReplaceAll(script, "127.0.0.1:8080", srv.addr)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walk-through failed: %v\n%s\nserver log:\n%s", err, out, srv.stderr.String())
	}
	for _, want := range []string{`"status":"CONNECTED"`, `"messageId"`, `"type":"image"`, `"caption":"hello from wagraph"`, `"mimetype":"image/png"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("walk-through output lacks %s:\n%s", want, out)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
