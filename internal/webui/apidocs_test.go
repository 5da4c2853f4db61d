package webui_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/webui"
)

// TestAPIDocsPage: the reference's page loads its scripts and stylesheets
// from this server only (no inline script), each of them is served under
// GraphiQL's policy, and the directory of its files is not listed.
func TestAPIDocsPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(webui.APIDocs())
	t.Cleanup(srv.Close)
	get := getter(t, srv.URL)
	res, page := get("/api/docs")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /api/docs = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got := res.Header.Get("Content-Security-Policy"); got != webui.ContentSecurityPolicy {
		t.Errorf("CSP %q, want %q", got, webui.ContentSecurityPolicy)
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "//cdn") {
		t.Errorf("the page names another origin:\n%s", page)
	}
	if n, m := strings.Count(page, "<script"), strings.Count(page, "<script src="); n != m || n != 2 {
		t.Errorf("%d scripts, %d of them files: want Swagger UI's bundle and init.js, as files", n, m)
	}
	refs := regexp.MustCompile(`(?:<script src|<link rel="stylesheet" href)="(/[^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != 4 {
		t.Errorf("%d files referenced, want 4 (2 scripts, 2 stylesheets)", len(refs))
	}
	for _, ref := range refs {
		path := ref[1]
		if !strings.HasPrefix(path, "/apidocs/") {
			t.Errorf("%s is not one of the reference's files", path)
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
	// init.js keeps Swagger UI to this server: no validator badge (it
	// would send the document's URL to validator.swagger.io), no document
	// named in the page's query, this server's document.
	_, init := get("/apidocs/init.js")
	for _, setting := range []string{`url: "/api/v1/openapi.json"`, "validatorUrl: null", "queryConfigEnabled: false"} {
		if !strings.Contains(init, setting) {
			t.Errorf("init.js lacks %s", setting)
		}
	}
	if res, _ := get("/apidocs/"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /apidocs/ = %d, want 404 (no listing)", res.StatusCode)
	}
}

// TestPinnedAPIDocs: Swagger UI's files are the ones of the version the
// package doc names (npm pack swagger-ui-dist@5.35.0), with its license;
// updating them updates these sums.
func TestPinnedAPIDocs(t *testing.T) {
	t.Parallel()
	pinned := map[string]string{
		"swagger-ui-bundle.js": "e6a898692f2d768e807c3ba4626068a69a2c5dd960dd6c76f3e4d3a3de180af2",
		"swagger-ui.css":       "5ed08757e53da3e026d6cbecc61fe5d43585c9560b302d534ad56692519a273d",
	}
	for name, want := range pinned {
		b, err := os.ReadFile(filepath.Join("static", "apidocs", name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"LICENSE.swagger-ui", "NOTICE.swagger-ui", "swagger-ui-bundle.js.LICENSE.txt"} {
		if b, err := os.ReadFile(filepath.Join("static", "apidocs", name)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v, %d bytes: Swagger UI's license and notice ship with it", name, err, len(b))
		}
	}
}

// TestAPIDocsInABrowser: a real browser opens /api/docs of a whole server;
// the reference renders every operation of the served document, an
// operation opened shows its request example, every request stays on the
// server (nothing from a CDN, no validator badge), and the browser reports
// no console error, no exception and no CSP violation.
func TestAPIDocsInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.Start(t, apptest.Config(t))
	// The server mounts the page at /api/docs (/api/docs/ leads there)
	// and its files under /apidocs/.
	for _, path := range []string{"/api/docs", "/api/docs/", "/apidocs/init.js"} {
		if res := srv.Do(t, http.MethodGet, path, "", "", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), "/api/v1/openapi.json") {
			t.Errorf("GET %s: %d, %d bytes; want 200 naming /api/v1/openapi.json", path, res.Status, len(res.Body))
		}
	}
	b := newBrowser(t, srv.URL, 2*time.Minute, nil)
	var title string
	var summaries []string
	b.run(t, "the API reference did not render",
		chromedp.Navigate(srv.URL+"/api/docs"),
		chromedp.WaitVisible(`#operations-messages-sendText`, chromedp.ByQuery),
		chromedp.Title(&title),
		chromedp.Evaluate(`[...document.querySelectorAll(".opblock-summary-description")].map(e => e.textContent)`, &summaries),
	)
	if !strings.Contains(title, "API reference") {
		t.Errorf("title %q", title)
	}
	for _, want := range []string{"Create a session", "Send a text message", "Create a webhook", "Send a webhook.test event"} {
		if !slices.Contains(summaries, want) {
			t.Errorf("the reference does not show %q", want)
		}
	}
	if want := documentOperations(t, srv); len(summaries) != want {
		t.Errorf("%d operations rendered, want the document's %d: %q", len(summaries), want, summaries)
	}

	// Opening sendText shows its description and its request example.
	var opened string
	b.run(t, "opening sendText",
		chromedp.Click(`#operations-messages-sendText .opblock-summary-control`, chromedp.ByQuery),
		chromedp.WaitVisible(`#operations-messages-sendText .opblock-body`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#operations-messages-sendText .opblock-body").innerText.includes("Hello from wagraph")`, nil),
		chromedp.Text(`#operations-messages-sendText .opblock-body`, &opened, chromedp.ByQuery),
	)
	if !strings.Contains(opened, "Needs a CONNECTED session") {
		t.Errorf("the opened operation does not show its description:\n%s", opened)
	}
	b.report(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !slices.Contains(b.requests, srv.URL+"/api/v1/openapi.json") {
		t.Errorf("the page did not load this server's openapi.json: %v", b.requests)
	}
}

// documentOperations counts the operations of the served OpenAPI document.
func documentOperations(t *testing.T, srv *apptest.Server) int {
	t.Helper()
	res := srv.Do(t, http.MethodGet, "/api/v1/openapi.json", "", "", nil)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	n := 0
	for _, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				n++
			}
		}
	}
	if n < 37 {
		t.Fatalf("the document has %d operations; the seed contract alone has 37", n)
	}
	return n
}
