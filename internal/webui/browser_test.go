package webui_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

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

// TestGraphiQLInABrowser: a real browser opens GraphiQL at / of a whole
// server; the page renders its editor, every request it makes goes to the
// server itself (nothing from a CDN: it works without internet), and the
// browser reports no console error, no exception and no CSP violation.
func TestGraphiQLInABrowser(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancelTimeout)

	srvURL := srv.URL
	var (
		mu            sync.Mutex
		problems      []string
		requests      []string
		refusedSchema bool // GraphiQL asked /graphql without a token
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *cdplog.EventEntryAdded: // the browser's own: CSP violations, failed loads
			// GraphiQL asks for the schema before anybody typed a token
			// in its headers: the API refuses that, as it must.
			if ev.Entry.URL == srvURL+"/graphql" && strings.Contains(ev.Entry.Text, "401") {
				refusedSchema = true
				return
			}
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
				problems = append(problems, fmt.Sprintf("%s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	})
	var title string
	err := chromedp.Run(ctx,
		network.Enable(),
		cdplog.Enable(),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(".graphiql-container", chromedp.ByQuery),
		chromedp.WaitVisible(".graphiql-query-editor", chromedp.ByQuery),
		chromedp.Title(&title),
	)
	if err != nil {
		t.Fatalf("GraphiQL did not render: %v", err)
	}
	if !strings.Contains(title, "GraphiQL") {
		t.Errorf("title %q", title)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the browser reported %s", p)
	}
	if !refusedSchema {
		t.Error("GraphiQL did not ask this server's /graphql for the schema")
	}
	if len(requests) < 5 {
		t.Errorf("%d requests: %v; want the page and its files", len(requests), requests)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, srvURL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, not from the server", u)
		}
	}
}
