package webui_test

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestLiveClosedWhileConnecting: the page's one socket, closed while it is
// still connecting (a page left, or "reconnect" clicked, before a slow
// server answered the upgrade), closes without the browser reporting a
// failed connection. On main before this change it reported "WebSocket is
// closed before the connection is established", which failed a dashboard
// test on a loaded CI machine.
func TestLiveClosedWhileConnecting(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.Start(t, apptest.Config(t))
	b := newBrowser(t, srv.URL, time.Minute, nil)
	var sockets int
	b.run(t, "close and drop while connecting",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.Evaluate(`(async () => {
			const { Live } = await import("/ui/gql.js");
			const handlers = { next() {}, error() {} };
			const doc = "subscription($s: ID!) { sessionStatus(sessionId: $s) { status } }";
			// Left at once: the subscription's end closes the socket.
			const left = new Live();
			left.subscribe(doc, () => ({ s: "x" }), handlers)();
			// Closed as the page's close does.
			const closed = new Live();
			closed.subscribe(doc, () => ({ s: "x" }), handlers);
			closed.close();
			// Dropped for a reconnect, then left.
			const dropped = new Live();
			dropped.subscribe(doc, () => ({ s: "x" }), handlers);
			dropped.drop();
			await new Promise((r) => setTimeout(r, 1500));
			dropped.close();
			await new Promise((r) => setTimeout(r, 500));
			return 3;
		})()`, &sockets, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if sockets != 3 {
		t.Fatalf("the script ran %d cases, want 3", sockets)
	}
	b.report(t)
}
