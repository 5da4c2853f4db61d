package restcompat_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/restcompat"
)

// The tools the users of the API run on its description, pinned in
// testdata/tools/package.json (and its lockfile) and installed there by
// `npm ci` (make test).
const toolsDir = "testdata/tools"

// npmTool is the path of a pinned tool's executable; a missing one fails
// the test with the way to install it.
func npmTool(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the npm tools, which make test installs and make test-short does not")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: run make test (it installs Node.js and the npm tools)")
	}
	p, err := filepath.Abs(filepath.Join(toolsDir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run make test (it installs the npm tools)", p)
	}
	return p
}

// runTool runs a tool in dir and returns its combined output; quiet keeps
// the tools from looking for updates or reporting usage (the tests run
// without internet).
func runTool(t *testing.T, dir, tool string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true",
		"NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// servedDocument fetches the OpenAPI document from a whole running server,
// as a user's generator would, and writes it to dir/openapi.json.
func servedDocument(t *testing.T, srv *apptest.Server, dir string) string {
	t.Helper()
	res, err := http.Get(srv.URL + restcompat.Prefix + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET openapi.json: %d %s", res.StatusCode, body)
	}
	path := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenAPILint lints the served document with the two linters users
// run, on their stock rule sets: Redocly's recommended and Spectral's
// spectral:oas. Any finding fails, warnings included: they validate the
// examples against their schemas too. The one exception is listed in
// testdata/redocly-lint-ignore.yaml, path by path.
func TestOpenAPILint(t *testing.T) {
	dbtest.OneBackend(t, "the served OpenAPI document linted: it is generated from the route table, whatever stores the data")
	redocly, spectral := npmTool(t, "redocly"), npmTool(t, "spectral")
	srv := apptest.Start(t, apptest.Config(t))
	dir := t.TempDir()
	doc := servedDocument(t, srv, dir)
	// The contract's one ambiguity, ignored path by path (the file says
	// why); Redocly reads the ignore file from the directory it runs in.
	ignore, err := os.ReadFile(filepath.Join("testdata", "redocly-lint-ignore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".redocly.lint-ignore.yaml"), ignore, 0o644); err != nil {
		t.Fatal(err)
	}
	// Each listed problem must still be there: a path the list names that
	// no longer clashes is taken off it.
	ignored := strings.Count(string(ignore), "\n    - '")

	t.Run("redocly recommended", func(t *testing.T) {
		out, err := runTool(t, dir, redocly, "lint", "--extends=recommended", "--format=json", doc)
		var report struct {
			Totals *struct{ Errors, Warnings, Ignored int }
		}
		// The JSON report is the output's one object, between Redocly's
		// notices.
		jsonStart := strings.Index(out, "{")
		if jsonStart < 0 || json.NewDecoder(strings.NewReader(out[jsonStart:])).Decode(&report) != nil || report.Totals == nil {
			t.Fatalf("redocly lint (%v) printed no report:\n%s", err, out)
		}
		if err != nil || report.Totals.Errors+report.Totals.Warnings > 0 || report.Totals.Ignored != ignored {
			stylish, _ := runTool(t, dir, redocly, "lint", "--extends=recommended", "--format=stylish", doc)
			t.Errorf("redocly lint: %d errors, %d warnings, %d ignored of the %d listed (exit: %v):\n%s",
				report.Totals.Errors, report.Totals.Warnings, report.Totals.Ignored, ignored, err, stylish)
		}
	})

	t.Run("spectral oas", func(t *testing.T) {
		ruleset := filepath.Join(dir, "spectral.yaml")
		if err := os.WriteFile(ruleset, []byte("extends: [\"spectral:oas\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// --fail-severity=hint: a finding of any severity fails.
		out, err := runTool(t, dir, spectral, "lint", "--ruleset", ruleset, "--fail-severity=hint", "--format=text", doc)
		if err != nil || strings.TrimSpace(out) != "" && !strings.Contains(out, "No results") {
			t.Errorf("spectral lint (exit: %v):\n%s", err, out)
		}
	})
}
