package webui_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/webui"
)

// TestGraphiQLPage: the page at / loads every script and stylesheet from
// this server (nothing from a CDN, no inline script), each of them is
// served, and every answer carries the Content-Security-Policy; the
// directory of the files is not listed.
func TestGraphiQLPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(webui.GraphiQL())
	t.Cleanup(srv.Close)
	get := getter(t, srv.URL)
	res, page := get("/")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got := res.Header.Get("Content-Security-Policy"); got != webui.ContentSecurityPolicy {
		t.Errorf("CSP %q, want %q", got, webui.ContentSecurityPolicy)
	}
	for _, part := range []string{"script-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"} {
		if !strings.Contains(webui.ContentSecurityPolicy, part) {
			t.Errorf("the CSP lacks %q", part)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "//cdn") {
		t.Errorf("the page names another origin:\n%s", page)
	}
	if n, m := strings.Count(page, "<script"), strings.Count(page, "<script src="); n != m || n == 0 {
		t.Errorf("%d scripts, %d of them files: want every script a file of this server", n, m)
	}
	// Every file the page loads (the icon is an empty data: URL, so that
	// the browser does not ask for /favicon.ico).
	refs := regexp.MustCompile(`(?:src|href)="(/[^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != 7 {
		t.Errorf("%d files referenced, want 7 (5 scripts, 2 stylesheets)", len(refs))
	}
	for _, ref := range refs {
		path := ref[1]
		if !strings.HasPrefix(path, "/graphiql/") {
			t.Errorf("%s is not one of this server's files", path)
			continue
		}
		res, body := get(path)
		ct := res.Header.Get("Content-Type")
		if res.StatusCode != http.StatusOK || len(body) == 0 || !(strings.HasPrefix(ct, "text/javascript") || strings.HasPrefix(ct, "text/css")) {
			t.Errorf("GET %s = %d %s, %d bytes", path, res.StatusCode, ct, len(body))
		}
		if res.Header.Get("Content-Security-Policy") != webui.ContentSecurityPolicy || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s without the security headers: %v", path, res.Header)
		}
	}
	if res, _ := get("/graphiql/"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /graphiql/ = %d, want 404 (no listing)", res.StatusCode)
	}
}

// TestPinnedGraphiQL: the files of the pinned dependency are the ones of
// the versions the package doc names (npm pack graphiql@3.8.3 react@18.3.1
// react-dom@18.3.1); updating them updates these sums.
func TestPinnedGraphiQL(t *testing.T) {
	t.Parallel()
	pinned := map[string]string{
		"graphiql.min.js":             "22faab94067b695e5f7959619fbe686ebcc8955002a0c97d986bcbba4ad4bc2c",
		"graphiql.min.css":            "b1868247f8e0502cd869e581f5f3cb55b334862e7f51b1d6cbace11059b9adc2",
		"react.production.min.js":     "d949f1c3687aedadcedac85261865f29b17cd273997e7f6b2bfc53b2f9d4c4dd",
		"react-dom.production.min.js": "35f4f974f4b2bcd44da73963347f8952e341f83909e4498227d4e26b98f66f0d",
	}
	for name, want := range pinned {
		b, err := os.ReadFile(filepath.Join("static", "graphiql", name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s", name, got, want)
		}
	}
}

// TestDashboardFiles: the dashboard's page loads only its own module, with
// no inline script or style; every module it imports is served as
// JavaScript under the dashboard's policy; and no file of it turns text
// into markup (the one rule that keeps a contact's text a text) or sets a
// style the policy would refuse.
func TestDashboardFiles(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(webui.Dashboard())
	t.Cleanup(srv.Close)
	get := getter(t, srv.URL)
	res, page := get("/ui/")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /ui/ = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"} {
		if res.Header.Get(h) == "" {
			t.Errorf("GET /ui/ without %s", h)
		}
	}
	if got := res.Header.Get("Content-Security-Policy"); got != webui.DashboardPolicy {
		t.Errorf("CSP %q, want %q", got, webui.DashboardPolicy)
	}
	if n, m := strings.Count(page, "<script"), strings.Count(page, `<script type="module" src="app.js"></script>`); n != 1 || m != 1 {
		t.Errorf("the page has %d scripts; want only app.js as a file", n)
	}
	if strings.Contains(page, "style=") || strings.Contains(page, "<style") {
		t.Error("the page has inline style, which its policy refuses")
	}
	// Every module, followed from app.js through its imports.
	seen := map[string]bool{}
	queue := []string{"app.js"}
	importRE := regexp.MustCompile(`(?m)^import .* from "\./([\w.-]+\.js)";`)
	banned := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", `"style"`, ".style."}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		res, body := get("/ui/" + name)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET /ui/%s = %d %s", name, res.StatusCode, res.Header.Get("Content-Type"))
			continue
		}
		if res.Header.Get("Content-Security-Policy") != webui.DashboardPolicy {
			t.Errorf("GET /ui/%s without the dashboard's policy", name)
		}
		for _, b := range banned {
			if strings.Contains(body, b) {
				t.Errorf("%s uses %s: build elements with dom.js's h, text as text", name, b)
			}
		}
		for _, m := range importRE.FindAllStringSubmatch(body, -1) {
			queue = append(queue, m[1])
		}
	}
	files, err := os.ReadDir(filepath.Join("static", "ui"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".js") && !seen[f.Name()] {
			t.Errorf("%s is not imported by the page", f.Name())
		}
	}
	if len(seen) < 8 {
		t.Errorf("only %d modules reached from app.js: %v", len(seen), seen)
	}
	for _, path := range []string{"/ui/nothing.js", "/ui/static/"} {
		if res, _ := get(path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, res.StatusCode)
		}
	}
}

// getter GETs paths of origin, returning the answer and its body.
func getter(t *testing.T, origin string) func(path string) (*http.Response, string) {
	return func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, string(b)
	}
}
