package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxRootLines bounds the lines of non-test Go in this package: the root
// wires and holds no rule of its own, and what grows here (a loop, a
// policy, a mapping) belongs in the part it is about. Lower it as the
// root shrinks; never raise it.
const maxRootLines = 700

// TestRootSize fails when the composition root outgrows its budget.
func TestRootSize(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total, counted := 0, 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
		counted++
	}
	if counted == 0 {
		t.Fatal("no Go file found: the test does not run in the package's directory")
	}
	t.Logf("%d lines of non-test Go in %d files", total, counted)
	if total > maxRootLines {
		t.Errorf("internal/app holds %d lines of non-test Go, over its budget of %d: move what is not wiring to the part it is about", total, maxRootLines)
	}
}
