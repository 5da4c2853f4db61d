package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// inABrowser marks a test of the dashboard in a browser: it runs on the
// SQLite pass only (dbtest.OneBackend).
func inABrowser(t *testing.T) {
	t.Helper()
	dbtest.OneBackend(t, "the dashboard in a browser: what it reads and does goes through the GraphQL API, whose storage graph and internal/e2e test on both backends")
}

// chromiumPath finds the browser the browser tests drive (Debian's
// chromium, which `make deps` installs).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: `make deps` installs Debian's chromium, which the browser tests drive")
	return ""
}

// browser is a headless Chromium with one tab, recording what a person
// would never want to see: console errors and warnings, exceptions, the
// browser's own errors (CSP violations, failed loads), dialogs (an
// alert() that ran), and every request, so a test can check that nothing
// came from elsewhere.
type browser struct {
	ctx      context.Context
	origin   string
	expected func(*cdplog.Entry) bool // called with mu held

	mu       sync.Mutex
	problems []string
	requests []string
	sockets  []string
}

// newBrowser starts Chromium; expected (nil: none) says which of the
// browser's own log entries are expected.
func newBrowser(t *testing.T, origin string, timeout time.Duration, expected func(*cdplog.Entry) bool) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("a browser test (Chromium): make test runs it, make test-short skips it")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.WindowSize(1280, 860))
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	if expected == nil {
		expected = func(*cdplog.Entry) bool { return false }
	}
	b := &browser{ctx: ctx, origin: origin, expected: expected}
	chromedp.ListenTarget(ctx, b.listen)
	if err := chromedp.Run(ctx, network.Enable(), cdplog.Enable(), page.Enable()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *cdplog.EventEntryAdded:
		if b.expected(ev.Entry) {
			return
		}
		if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
			b.problems = append(b.problems, fmt.Sprintf("%s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Error())
	case *page.EventJavascriptDialogOpening:
		b.problems = append(b.problems, fmt.Sprintf("a %s dialog opened: %q", ev.Type, ev.Message))
		// Close it, or the page would hang on it.
		go func() { _ = chromedp.Run(b.ctx, page.HandleJavaScriptDialog(false)) }()
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *network.EventWebSocketCreated:
		b.sockets = append(b.sockets, ev.URL)
	}
}

// stepTimeout bounds one step of a browser test.
const stepTimeout = 40 * time.Second

// run runs actions, failing the test with what as the step that failed,
// and what the page showed then.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	b.runFor(t, what, stepTimeout, actions...)
}

// runFor is run for a step that may take up to d.
func (b *browser) runFor(t *testing.T, what string, d time.Duration, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var text string
		var shot []byte
		_ = chromedp.Run(b.ctx, chromedp.Text("body", &text, chromedp.ByQuery), chromedp.CaptureScreenshot(&shot))
		name := filepath.Join(os.TempDir(), strings.ReplaceAll(t.Name(), "/", "_")+"-failed.png")
		if os.WriteFile(name, shot, 0o644) == nil {
			t.Logf("the page when %q failed: %s", what, name)
		}
		t.Logf("its text:\n%s", text)
		b.report(t)
		t.Fatalf("%s: %v", what, err)
	}
}

// report fails the test with every problem the browser reported, and with
// any request that left the server's origin.
func (b *browser) report(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		t.Errorf("the browser reported %s", p)
	}
	b.problems = nil
	for _, u := range b.requests {
		if !strings.HasPrefix(u, b.origin+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, not from the server", u)
		}
	}
	for _, u := range b.sockets {
		if u != "ws"+strings.TrimPrefix(b.origin, "http")+"/graphql" {
			t.Errorf("the page opened a socket to %s, not to the server's /graphql", u)
		}
	}
}

// TestGraphiQLInABrowser: a real browser opens GraphiQL at / of a whole
// server. It opens ready: no error and no request to /graphql before a
// token is there (the API would refuse it), the Headers tab open with an
// Authorization placeholder, a hint saying where tokens come from, and a
// wagraph example query. Entering a token loads the schema (the docs list
// Query's fields) and the example query runs. Every request goes to the
// server itself (nothing from a CDN: it works without internet), and the
// browser reports no console error, exception, refused request or CSP
// violation.
func TestGraphiQLInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.Start(t, apptest.Config(t))
	b := newBrowser(t, srv.URL, 2*time.Minute, nil)
	graphqlRequests := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		n := 0
		for _, u := range b.requests {
			if u == srv.URL+"/graphql" {
				n++
			}
		}
		return n
	}
	// editors returns the text of GraphiQL's editors (CodeMirror 5).
	editor := func(selector string) string {
		return `(() => { const el = document.querySelector(` + "`" + selector + "`" + `); return el && el.CodeMirror ? el.CodeMirror.getValue() : ""; })()`
	}
	const headersEditor = `.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror`
	var title, hint, headers, query, body string
	b.run(t, "GraphiQL did not render",
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(".graphiql-container", chromedp.ByQuery),
		chromedp.WaitVisible(".graphiql-query-editor", chromedp.ByQuery),
		chromedp.WaitVisible(headersEditor, chromedp.ByQuery),
		chromedp.Title(&title),
		chromedp.Sleep(time.Second), // what GraphiQL would fetch at open, it has asked by now
		chromedp.Text("#hint", &hint, chromedp.ByQuery),
		chromedp.Evaluate(editor(headersEditor), &headers),
		chromedp.Evaluate(editor(".graphiql-query-editor .CodeMirror"), &query),
		chromedp.Text("body", &body, chromedp.ByQuery),
	)
	if !strings.Contains(title, "GraphiQL") {
		t.Errorf("title %q", title)
	}
	if n := graphqlRequests(); n != 0 {
		t.Errorf("GraphiQL made %d requests to /graphql before a token was entered, want none", n)
	}
	if strings.Contains(body, "Error fetching schema") || strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("GraphiQL opens on an error:\n%s", body)
	}
	for _, want := range []string{"Authorization", "admin token", "first start", "WAGRAPH_ADMIN_TOKEN", "createSession", "createUser"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint %q does not mention %q", hint, want)
		}
	}
	if !strings.Contains(headers, `"Authorization": "Bearer <your token>"`) {
		t.Errorf("the Headers tab holds %q, want the Authorization placeholder", headers)
	}
	for _, want := range []string{"query Overview", "viewer", "sessions {", "status"} {
		if !strings.Contains(query, want) {
			t.Errorf("the example query lacks %q:\n%s", want, query)
		}
	}

	// Run before a token is there: the page says what to do, and asks
	// nothing of the server.
	var early string
	b.run(t, "running the query without a token",
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Poll(editor(".graphiql-response .CodeMirror")+` !== ""`, nil),
		chromedp.Evaluate(editor(".graphiql-response .CodeMirror"), &early),
	)
	if !strings.Contains(early, "Put your token in the Headers tab first") {
		t.Errorf("running the query before a token answers %s", early)
	}
	if n := graphqlRequests(); n != 0 {
		t.Errorf("running the query before a token made %d requests to /graphql, want none", n)
	}

	// A token entered: the schema loads, and the example query runs.
	sessionID := srv.CreateSession(t, "Watched")
	tok, _ := json.Marshal("{\n  \"Authorization\": \"Bearer " + apptest.AdminToken + "\"\n}")
	var fields, result string
	const queryLink = `[...document.querySelectorAll(".graphiql-doc-explorer a.graphiql-doc-explorer-type-name")].find(a => a.textContent === "Query")`
	b.run(t, "entering a token",
		chromedp.Evaluate(`document.querySelector(`+"`"+headersEditor+"`"+`).CodeMirror.setValue(`+string(tok)+`)`, nil),
		chromedp.Click(`button[aria-label="Show Documentation Explorer"]`, chromedp.ByQuery),
		// The schema's root types, once loaded: Query's link.
		chromedp.Poll(queryLink+` !== undefined`, nil),
		chromedp.Evaluate(queryLink+`.click()`, nil),
		chromedp.Poll(`document.querySelector(".graphiql-doc-explorer") && /sessions/.test(document.querySelector(".graphiql-doc-explorer").textContent)`, nil),
		chromedp.Text(".graphiql-doc-explorer", &fields, chromedp.ByQuery),
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Poll(editor(".graphiql-response .CodeMirror")+`.includes("Watched")`, nil),
		chromedp.Evaluate(editor(".graphiql-response .CodeMirror"), &result),
	)
	for _, want := range []string{"viewer", "sessions", "session(", "events("} {
		if !strings.Contains(fields, want) {
			t.Errorf("the docs of Query lack %q:\n%s", want, fields)
		}
	}
	var data struct {
		Data struct {
			Viewer   struct{ User struct{ Name string } }
			Sessions []struct{ ID, Name, Status string }
		}
		Errors []any
	}
	if err := json.Unmarshal([]byte(result), &data); err != nil || len(data.Errors) != 0 || data.Data.Viewer.User.Name != "admin" ||
		len(data.Data.Sessions) != 1 || data.Data.Sessions[0].ID != sessionID {
		t.Errorf("the example query answered %s (%v)", result, err)
	}

	// The page's fetcher: a query over HTTP and a subscription over
	// graphql-transport-ws, each with the token of the Headers tab; and the
	// way to the dashboard.
	run := func(doc string) string {
		q, _ := json.Marshal(doc)
		tok, _ := json.Marshal("Bearer " + apptest.AdminToken)
		return fmt.Sprintf(`new Promise((resolve, reject) => {
			const r = wagraphFetcher(location.href)({ query: %s }, { headers: { Authorization: %s } });
			// GraphiQL takes a promise, an async iterable or an observable.
			if (r.then || r[Symbol.asyncIterator]) return Promise.resolve(r)
				.then(v => v[Symbol.asyncIterator] ? v[Symbol.asyncIterator]().next().then(x => x.value) : v)
				.then(v => resolve(JSON.stringify(v)), reject);
			const sub = r.subscribe({ next: v => { sub.unsubscribe(); resolve(JSON.stringify(v)); }, error: reject, complete: () => {} });
		})`, q, tok)
	}
	var viewer, status string
	var dashboardLinks int
	awaitPromise := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	b.run(t, "the fetcher",
		chromedp.Evaluate(run(`{ viewer { user { name } } }`), &viewer, awaitPromise),
		chromedp.Evaluate(run(`# a subscription, not a query
			subscription Watch { sessionStatus(sessionId: "`+sessionID+`") { name status } }`), &status, awaitPromise),
		chromedp.Evaluate(`document.querySelectorAll('.graphiql-logo a[href="/ui/"]').length`, &dashboardLinks),
	)
	if viewer != `{"data":{"viewer":{"user":{"name":"admin"}}}}` {
		t.Errorf("a query through GraphiQL's fetcher: %s", viewer)
	}
	if status != `{"data":{"sessionStatus":{"name":"Watched","status":"DISCONNECTED"}}}` {
		t.Errorf("a subscription through GraphiQL's fetcher: %s", status)
	}
	b.mu.Lock()
	if len(b.sockets) != 1 {
		t.Errorf("the subscription opened %d sockets, want 1: %v", len(b.sockets), b.sockets)
	}
	b.mu.Unlock()
	if dashboardLinks != 1 {
		t.Errorf("%d links to the dashboard, want 1", dashboardLinks)
	}
	b.report(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) < 5 {
		t.Errorf("%d requests: %v; want the page and its files", len(b.requests), b.requests)
	}
}
