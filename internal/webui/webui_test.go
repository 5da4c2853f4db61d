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
	srv := httptest.NewServer(webui.GraphiQL())
	t.Cleanup(srv.Close)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
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
	if len(refs) != 6 {
		t.Errorf("%d files referenced, want 6 (4 scripts, 2 stylesheets)", len(refs))
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
