package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory: go test runs a package's
// tests in the package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository root %s: %v", root, err)
	}
	return root
}

// readRepoFile is a file of the repository, by its slash-separated path.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goModVersion is go.mod's `go` line: the least Go that builds wagraph.
func goModVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no `go` line")
	}
	return m[1]
}

// scriptResult is what one run of a script printed and how it ended.
type scriptResult struct {
	stdout, stderr string
	err            error
}

// runScript runs a script of the repository with exactly env as its
// environment.
func runScript(t *testing.T, env []string, path string, args ...string) scriptResult {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), filepath.FromSlash(path)), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return scriptResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// keyValues reads KEY=value lines.
func keyValues(t *testing.T, text string) map[string]string {
	t.Helper()
	kv := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("not a KEY=value line: %q", line)
		}
		kv[k] = v
	}
	return kv
}
