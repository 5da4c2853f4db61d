package webui_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

// overflowScript lists what reaches past the viewport's sides: the page
// scrolled sideways, and each visible element sticking out (at most 10).
const overflowScript = `(() => {
	const vw = document.documentElement.clientWidth;
	const out = [];
	const sw = document.documentElement.scrollWidth;
	if (sw > vw) out.push("the page is " + sw + " px wide in a viewport of " + vw);
	for (const el of document.querySelectorAll("body *")) {
		const r = el.getBoundingClientRect();
		if (r.width === 0 || r.height === 0 || !el.checkVisibility()) continue; // not shown (a closed details' content)
		if (r.left < -0.5 || r.right > vw + 0.5) {
			const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "";
			out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + " spans " + Math.round(r.left) + " to " + Math.round(r.right) + " px");
		}
		if (out.length >= 10) break;
	}
	return out;
})()`

// assertInside fails the test when anything of the page reaches past the
// viewport's sides.
func assertInside(t *testing.T, b *browser, v viewport, page string) {
	t.Helper()
	var out []string
	b.run(t, "measuring "+page, chromedp.Evaluate(overflowScript, &out))
	for _, o := range out {
		t.Errorf("%s at %d px: %s", page, v.width, o)
	}
}

// box is an element's place on the page, in CSS pixels.
type box struct {
	Text                     string
	Left, Top, Right, Bottom float64
	Cell                     int // a row's button: the index of its cell
	Lines                    int // a row's button: the lines of its label
}

// middle is the box's vertical center: boxes on one line share it (the
// line's items are centered).
func (a box) middle() float64 { return (a.Top + a.Bottom) / 2 }

func (a box) same(b box) bool {
	return math.Abs(a.Left-b.Left) < 1 && math.Abs(a.Top-b.Top) < 1 && math.Abs(a.Right-b.Right) < 1 && math.Abs(a.Bottom-b.Bottom) < 1
}

// tableRow is a row of a list table as measured: its box, its cells' and
// its buttons' (each with the index of its cell and its label's lines).
type tableRow struct {
	ID      string
	Box     box
	Cells   []box
	Buttons []box
}

// rowsScript measures the rows selected by a selector (a JSON string).
const rowsScript = `((sel) => {
	const at = (el, text) => { const r = el.getBoundingClientRect(); return { Text: text || "", Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom }; };
	const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el); return new Set([...r.getClientRects()].map((l) => Math.round(l.bottom))).size; };
	return [...document.querySelectorAll(sel)].map((tr) => {
		const buttons = [...tr.querySelectorAll("button, a.button")].filter((b) => b.getClientRects().length > 0)
			.map((b) => ({ ...at(b, b.textContent), Cell: [...tr.children].indexOf(b.closest("td")), Lines: lines(b) }));
		return { ID: tr.dataset.sessionId || tr.dataset.webhookId || tr.dataset.deliveryId || "", Box: at(tr), Cells: [...tr.children].map((c) => at(c, c.textContent)), Buttons: buttons };
	});
})(%s)`

func measureRows(t *testing.T, b *browser, selector string) []tableRow {
	t.Helper()
	var rows []tableRow
	b.run(t, "measuring the rows of "+selector, chromedp.Evaluate(fmt.Sprintf(rowsScript, quote(selector)), &rows))
	return rows
}

// assertRows checks a list table's rows: the buttons of each cell on one
// line, each label on one line, inside the row (on a phone, where the row
// is a card, too); at a desktop's width, every cell of a row spanning the
// row's height, and, when equal is set, every row of the same height.
func assertRows(t *testing.T, v viewport, page string, rows []tableRow, equal bool) {
	t.Helper()
	if len(rows) == 0 {
		t.Errorf("%s at %d px: no rows measured", page, v.width)
		return
	}
	for _, r := range rows {
		lines := map[int]box{}
		for _, btn := range r.Buttons {
			first, ok := lines[btn.Cell]
			if !ok {
				lines[btn.Cell] = btn
				continue
			}
			if math.Abs(first.middle()-btn.middle()) >= 1 {
				t.Errorf("%s at %d px, row %s: %q (top %.0f) and %q (top %.0f) are not on one line", page, v.width, r.ID, first.Text, first.Top, btn.Text, btn.Top)
			}
		}
		for _, btn := range r.Buttons {
			if btn.Lines != 1 {
				t.Errorf("%s at %d px, row %s: the label %q takes %d lines", page, v.width, r.ID, btn.Text, btn.Lines)
			}
			if btn.Left < r.Box.Left-0.5 || btn.Right > r.Box.Right+0.5 || btn.Top < r.Box.Top-0.5 || btn.Bottom > r.Box.Bottom+0.5 {
				t.Errorf("%s at %d px, row %s: %q sticks out of its row (%+v in %+v)", page, v.width, r.ID, btn.Text, btn, r.Box)
			}
		}
		if v.phone {
			continue
		}
		for i, c := range r.Cells {
			if math.Abs(c.Top-r.Box.Top) >= 1 || math.Abs(c.Bottom-r.Box.Bottom) >= 1 {
				t.Errorf("%s at %d px, row %s: cell %d spans %.0f to %.0f, its row %.0f to %.0f", page, v.width, r.ID, i, c.Top, c.Bottom, r.Box.Top, r.Box.Bottom)
			}
		}
	}
	if equal && !v.phone {
		for _, r := range rows[1:] {
			if h, h0 := r.Box.Bottom-r.Box.Top, rows[0].Box.Bottom-rows[0].Box.Top; math.Abs(h-h0) >= 1 {
				t.Errorf("%s at %d px: row %s is %.0f px high, row %s %.0f px", page, v.width, r.ID, h, rows[0].ID, h0)
			}
		}
	}
}

func quote(s string) string {
	return fmt.Sprintf("%q", s)
}

// boxesScript measures the elements of a selector.
const boxesScript = `((sel) => [...document.querySelectorAll(sel)].map((el) => { const r = el.getBoundingClientRect(); return { Text: el.id || el.textContent, Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom }; }))(%s)`

func measure(t *testing.T, b *browser, selector string) []box {
	t.Helper()
	var out []box
	b.run(t, "measuring "+selector, chromedp.Evaluate(fmt.Sprintf(boxesScript, quote(selector)), &out))
	return out
}

// textsScript gives the texts of the elements of a selector, trimmed.
const textsScript = `((sel) => [...document.querySelectorAll(sel)].map((el) => el.textContent.trim()))(%s)`

func texts(t *testing.T, b *browser, selector string) []string {
	t.Helper()
	var out []string
	b.run(t, "reading "+selector, chromedp.Evaluate(fmt.Sprintf(textsScript, quote(selector)), &out))
	return out
}

// kindNames are the kinds as webhooks name them, from the one table of
// internal/events: the selectable ones, then webhook.test.
func kindNames(withTest bool) []string {
	var out []string
	for _, k := range events.Selectable() {
		out = append(out, string(k))
	}
	if withTest {
		out = append(out, string(events.WebhookTest))
	}
	return out
}

// TestDashboardLayoutInABrowser measures the dashboard in Chromium at a
// desktop's width and at a phone's (390 px): on the sessions page, the
// webhooks page and a delivery log, nothing reaches past the viewport's
// sides, each row's action buttons stay on one line (on a phone too, where
// a row becomes a card), no label wrapping inside its button, and at a
// desktop's width every cell of a row spans the row and the sessions' rows
// are of one height; on the events page the controls of the toolbar are on one line
// and opening the kinds filter moves none of them, its list staying inside
// the viewport. Everywhere the dashboard names an event kind (the filter,
// the stream's rows, the webhook form and list, the delivery log) it
// names it as webhooks do (inbound-message.upsert), the names being the
// ones of internal/events' table.
func TestDashboardLayoutInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	recv := newReceiver(t)
	srv := apptest.StartSandbox(t)
	phones := srv.Network(t)
	if err := phones.SetPushName(contactPhone, "Ann"); err != nil {
		t.Fatal(err)
	}

	// Sessions in each state that shows other buttons: connected (Disconnect,
	// Log out), linked but disconnected (Connect, Log out), pairing (Pair,
	// Disconnect) and new (Pair).
	shop := srv.LinkSession(t, "15550002222")
	away := srv.LinkSession(t, "15550003333")
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { id } }`, map[string]any{"id": away.ID}, nil)
	pairing := srv.CreateSession(t, "Front desk")
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { id } }`, map[string]any{"id": pairing}, nil)
	fresh := srv.CreateSession(t, "Sales line")
	srv.WaitStatus(t, away.ID, "DISCONNECTED", nil)
	srv.WaitStatus(t, pairing, "PAIRING", nil)

	// A webhook of two kinds, tested, and a message delivered to it.
	var created struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $u: String!) { createWebhook(sessionId: $s, input: { url: $u, displayName: "CRM",
		events: [INBOUND_MESSAGE_UPSERT, MESSAGES_REACTION] }) { webhook { id } } }`, map[string]any{"s": shop.ID, "u": recv.URL}, &created)
	webhookID := created.CreateWebhook.Webhook.ID
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`, map[string]any{"s": shop.ID, "w": webhookID}, nil)
	contactSends(t, srv, shop.ID, "hello before the pages open")
	waitStored(t, srv, shop.ID, "hello before the pages open")
	srv.WaitDeliveries(t, shop.ID, webhookID)

	b := newBrowser(t, srv.URL, 5*time.Minute, nil)
	signIn(t, b)
	sessionRows := `#session-rows tr[data-session-id]`
	for _, v := range viewports {
		t.Run(v.name, func(t *testing.T) {
			// The sessions page.
			b.run(t, "the sessions page",
				v.emulate(),
				chromedp.Navigate(srv.URL+"/ui/#/sessions"),
				chromedp.WaitVisible(fmt.Sprintf(`%s[data-session-id=%q] [data-status="CONNECTED"]`, sessionRows, shop.ID), chromedp.ByQuery),
				chromedp.WaitVisible(fmt.Sprintf(`%s[data-session-id=%q] [data-action="connect"]`, sessionRows, away.ID), chromedp.ByQuery),
				chromedp.WaitVisible(fmt.Sprintf(`%s[data-session-id=%q] [data-action="disconnect"]`, sessionRows, pairing), chromedp.ByQuery),
				chromedp.WaitVisible(fmt.Sprintf(`%s[data-session-id=%q] [data-action="pair"]`, sessionRows, fresh), chromedp.ByQuery),
			)
			assertInside(t, b, v, "the sessions page")
			assertRows(t, v, "the sessions page", measureRows(t, b, sessionRows), true)

			// The events page: the toolbar, with the filter closed and open.
			b.run(t, "the events page",
				chromedp.Navigate(srv.URL+"/ui/#/sessions/"+shop.ID+"/events"),
				chromedp.WaitVisible(`#stream-state[data-state="following"]`, chromedp.ByQuery),
				chromedp.Poll(`document.querySelectorAll("#kinds input").length > 0`, nil),
			)
			waitSubscribers(t, srv, 1)
			text := "hello at " + v.name + " width"
			contactSends(t, srv, shop.ID, text)
			b.run(t, "the live message", waitEvent(text))
			controls := "#stream-pause, #stream-reconnect, #kinds-summary"
			if !v.phone {
				controls += ", #stream-state" // a phone gives the stream's state a line of its own
			}
			closed := measure(t, b, controls)
			assertInside(t, b, v, "the events page")
			b.run(t, "opening the kinds filter",
				chromedp.Click("#kinds-summary", chromedp.ByQuery),
				chromedp.WaitVisible(`#kinds label`, chromedp.ByQuery),
			)
			open := measure(t, b, controls)
			if len(closed) < 3 || len(open) != len(closed) {
				t.Fatalf("the toolbar's controls: %d closed, %d open", len(closed), len(open))
			}
			for i, c := range closed {
				if math.Abs(c.middle()-closed[0].middle()) >= 1 {
					t.Errorf("the toolbar at %d px: %s spans %.0f to %.0f, %s %.0f to %.0f: not one line", v.width, c.Text, c.Top, c.Bottom, closed[0].Text, closed[0].Top, closed[0].Bottom)
				}
				if !c.same(open[i]) {
					t.Errorf("the toolbar at %d px: opening the kinds filter moved %s from %+v to %+v", v.width, c.Text, c, open[i])
				}
			}
			assertInside(t, b, v, "the events page with the kinds filter open")
			if got, want := texts(t, b, "#kinds label"), kindNames(true); !slices.Equal(got, want) {
				t.Errorf("the kinds filter offers\n%q\nwant the kinds as webhooks name them\n%q", got, want)
			}
			var kind string
			b.run(t, "the row's kind", chromedp.Evaluate(fmt.Sprintf(
				`(() => { for (const e of document.querySelectorAll("#event-list li")) if (e.textContent.includes(%s)) return e.querySelector(".kind").textContent; return ""; })()`,
				quote(text)), &kind))
			if kind != string(events.InboundMessageUpsert) {
				t.Errorf("the stream names the kind of %q %q, want %q", text, kind, events.InboundMessageUpsert)
			}
			b.run(t, "closing the kinds filter", chromedp.Click("#kinds-summary", chromedp.ByQuery))

			// The webhooks page: its list and its form.
			webhookRows := `#webhook-rows tr[data-webhook-id]`
			b.run(t, "the webhooks page",
				chromedp.Navigate(srv.URL+"/ui/#/sessions/"+shop.ID+"/webhooks"),
				chromedp.WaitVisible(webhookRows, chromedp.ByQuery),
				chromedp.WaitVisible("#wh-url", chromedp.ByQuery),
			)
			assertInside(t, b, v, "the webhooks page")
			assertRows(t, v, "the webhooks page", measureRows(t, b, webhookRows), false)
			if got, want := texts(t, b, ".webhook-form .kinds label"), kindNames(false); !slices.Equal(got, want) {
				t.Errorf("the webhook form offers\n%q\nwant the kinds as webhooks name them\n%q", got, want)
			}
			var listed string
			b.run(t, "the webhook's kinds", chromedp.Evaluate(`document.querySelector("#webhook-rows tr[data-webhook-id]").children[2].textContent`, &listed))
			if want := string(events.MessagesReaction) + ", " + string(events.InboundMessageUpsert); listed != want { // in the table's order
				t.Errorf("the webhook's row lists its kinds as %q, want %q", listed, want)
			}

			// The delivery log.
			deliveryRows := `#delivery-rows tr[data-delivery-id]`
			b.run(t, "the delivery log",
				chromedp.Navigate(srv.URL+"/ui/#/sessions/"+shop.ID+"/webhooks/"+webhookID),
				chromedp.WaitVisible(deliveryRows, chromedp.ByQuery),
			)
			assertInside(t, b, v, "the delivery log")
			assertRows(t, v, "the delivery log", measureRows(t, b, deliveryRows), false)
			kinds := texts(t, b, deliveryRows+" .kind")
			if !slices.Contains(kinds, string(events.InboundMessageUpsert)) || !slices.Contains(kinds, string(events.WebhookTest)) {
				t.Errorf("the delivery log names its kinds %q, want them as webhooks do (%s, %s)", kinds, events.InboundMessageUpsert, events.WebhookTest)
			}
			for _, k := range kinds {
				if strings.ToUpper(k) == k {
					t.Errorf("the delivery log names a kind %q, as no webhook does", k)
				}
			}
		})
	}
	b.report(t)
}
