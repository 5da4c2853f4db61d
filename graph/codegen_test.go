package graph_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// codegenDir holds the graphql-codegen set-up the README gives (codegen.ts),
// with its npm tools pinned in package-lock.json.
const codegenDir = "testdata/codegen"

// TestGraphQLCodegen: the README's graphql-codegen config generates
// TypeScript from a running server's schema (its introspection, with a
// token) for the documents in src/, every custom scalar mapped
// (strictScalars), and the generated code with a client using it passes
// tsc --strict. Not with -short: it runs the npm tools (a minute), which
// make test-short does not install.
func TestGraphQLCodegen(t *testing.T) {
	dbtest.OneBackend(t, "the schema's generated TypeScript type-checked: the contract's shape, the same on every backend")
	if testing.Short() {
		t.Skip("runs the npm tools: make test")
	}
	bin := func(name string) string {
		p, err := filepath.Abs(filepath.Join(codegenDir, "node_modules", ".bin", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: run make test (it installs the npm tools: npm ci in %s)", p, codegenDir)
		}
		return p
	}
	codegen, tsc := bin("graphql-codegen"), bin("tsc")
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("no node on PATH: run make test (it installs the npm tools)")
	}

	// A copy, so that runs do not write into the tree or into each other.
	dir := t.TempDir()
	for _, f := range []string{"codegen.ts", "tsconfig.json", "package.json", "src/operations.graphql", "src/use.ts"} {
		b, err := os.ReadFile(filepath.Join(codegenDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	modules, err := filepath.Abs(filepath.Join(codegenDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}

	srv := apptest.Start(t, apptest.Config(t))
	run := func(name string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WAGRAPH_URL="+srv.URL+"/graphql", "WAGRAPH_TOKEN="+apptest.AdminToken, "NO_COLOR=1", "CI=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
		}
	}
	run(codegen, "--config", "codegen.ts")
	generated, err := os.ReadFile(filepath.Join(dir, "src", "generated", "graphql.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"createdAt: string, connectedAt: string | null", // Time
		"occurredAt: string, data: unknown",             // Time, JSON
		"export const SessionsDocument",
		"export type SessionStatusSubscription",
	} {
		if !bytes.Contains(generated, []byte(want)) {
			t.Errorf("the generated code lacks %q", want)
		}
	}
	run(tsc, "--strict", "--noEmit", "-p", "tsconfig.json")
}
