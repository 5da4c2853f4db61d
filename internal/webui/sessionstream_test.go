package webui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSessionsPageOneStream: the sessions page follows all its rows with
// one subscription (sessionStatuses), not one per row: with six sessions
// listed the page sends one subscribe, and through it a row follows its
// session into PAIRING and a session deleted elsewhere leaves the page.
// On main before this change the page sent six sessionStatus subscribes.
func TestSessionsPageOneStream(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.StartSandbox(t)
	const n = 6
	ids := make([]string, n)
	for i := range ids {
		ids[i] = srv.CreateSession(t, fmt.Sprintf("Row %d", i))
	}
	b := newBrowser(t, srv.URL, 2*time.Minute, nil)

	// What the page sends over its sockets, as the browser saw it go.
	var mu sync.Mutex
	var subscribes []string
	chromedp.ListenTarget(b.ctx, func(ev any) {
		f, ok := ev.(*network.EventWebSocketFrameSent)
		if !ok {
			return
		}
		var m struct {
			Type    string
			Payload struct{ Query string }
		}
		if json.Unmarshal([]byte(f.Response.PayloadData), &m) == nil && m.Type == "subscribe" {
			mu.Lock()
			subscribes = append(subscribes, m.Payload.Query)
			mu.Unlock()
		}
	})
	row := func(id string) string { return `#session-rows tr[data-session-id="` + id + `"]` }
	b.run(t, "the sessions page",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible(row(ids[n-1])+` [data-status="DISCONNECTED"]`, chromedp.ByQuery),
	)
	// The stream is open once the server follows every row's session (a
	// page that does not follow them through the bus goes on after 5 s).
	for deadline := time.Now().Add(5 * time.Second); srv.App.Bus().Subscribers() < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}

	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": ids[0]}, nil)
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": ids[1]}, nil)
	b.run(t, "a row follows its session; a deleted one goes",
		chromedp.WaitVisible(row(ids[0])+` [data-status="PAIRING"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(row(ids[1]), chromedp.ByQuery),
	)
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { status } }`, map[string]any{"id": ids[0]}, nil)
	b.run(t, "and back", chromedp.WaitVisible(row(ids[0])+` [data-status="DISCONNECTED"]`, chromedp.ByQuery))

	mu.Lock()
	got := append([]string(nil), subscribes...)
	mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "sessionStatuses") {
		t.Errorf("the page sent %d subscribes for %d rows: %q; want one sessionStatuses", len(got), n, got)
	}
	b.report(t)
}
