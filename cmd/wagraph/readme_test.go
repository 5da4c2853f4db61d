package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
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

// quickstartMarker precedes the README's quick start: a receiver's command
// line, then the shell block that links a session, sends and answers.
const quickstartMarker = "<!-- quickstart:"

// readmeQuickstart returns the two sh blocks after the quick start's marker.
func readmeQuickstart(t *testing.T) (receive, script string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), quickstartMarker)
	if !ok {
		t.Fatalf("README.md has no %q marker", quickstartMarker)
	}
	var blocks []string
	for len(blocks) < 2 {
		var block string
		_, rest, ok = strings.Cut(rest, "```sh\n")
		if ok {
			block, rest, ok = strings.Cut(rest, "```")
		}
		if !ok {
			t.Fatalf("the quick start has %d sh blocks, want 2", len(blocks))
		}
		blocks = append(blocks, block)
	}
	return strings.TrimSpace(blocks[0]), blocks[1]
}

// TestReadmeQuickstart runs the README's quick start as written: `wagraph
// receive` as its first block says, then the second block with bash and
// curl against `wagraph serve --sandbox` with the README's token (only the
// two listen addresses are the test's own). The text goes out, and the
// contact's answer reaches the receiver through a webhook to loopback.
func TestReadmeQuickstart(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: run make test-deps", tool)
		}
	}
	receiveLine, script := readmeQuickstart(t)
	const token = "sandbox-walkthrough-token-0123456789"
	if !strings.Contains(script, "T="+token) {
		t.Fatalf("the quick start does not use the token the README exports (%s)", token)
	}
	args := strings.Fields(receiveLine)
	if len(args) < 2 || args[0] != "bin/wagraph" || args[1] != "receive" {
		t.Fatalf("the receiver's line is %q, want bin/wagraph receive …", receiveLine)
	}
	const readmeReceiver = "127.0.0.1:9000"
	hookAddr := freeLoopbackAddr(t)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, readmeReceiver, hookAddr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var printed, receiveErr logtest.Buffer
	received := make(chan int, 1)
	go func() { received <- run(ctx, args[1:], envOf(nil), &printed, &receiveErr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-received; code != 0 {
			t.Errorf("wagraph receive exited %d: %s", code, receiveErr.String())
		}
	})

	srv := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": token},
		append([]string{"--sandbox", "--addr", "127.0.0.1:0"}, storeArgs(t)...)...)
	script = strings.ReplaceAll(script, "127.0.0.1:8080", srv.addr)
	script = strings.ReplaceAll(script, readmeReceiver, hookAddr)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("quick start failed: %v\n%s\nserver log:\n%s", err, out, srv.stderr.String())
	}
	for _, want := range []string{`"status":"CONNECTED"`, `"messageId"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("quick start output lacks %s:\n%s", want, out)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(printed.String(), "hi back") {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver printed no answer within 20 s:\n%s\nreceiver:\n%s\nquick start output:\n%s\nserver log:\n%s",
				printed.String(), receiveErr.String(), out, srv.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(printed.String(), "inbound-message.upsert seq=") {
		t.Errorf("the receiver's first line is not the inbound message:\n%s", printed.String())
	}
	t.Logf("the receiver printed:\n%s", printed.String())
}

// freeLoopbackAddr is a loopback address with a port free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
