package webui_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/webui"
	"github.com/wagraph/wagraph/whatsapp"
)

// updateScreenshots writes the README's screenshots (docs/screenshots)
// from TestDashboardInABrowser: `make screenshots`.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the README's screenshots from the dashboard test")

// The accounts of the simulated network the test plays.
const (
	ownerPhone   = "15550009999" // the phone that links the session
	contactPhone = "15550001111" // the dashboard's sandbox panel's default contact
	xssText      = `<img src=x onerror=alert(1)>`
	xssPushName  = `<b onmouseover=alert(2)>Eve</b>`
)

// TestDashboardInABrowser walks the dashboard as a newcomer would, in
// Chromium against a whole server in sandbox mode (the App serve --sandbox
// runs): paste the token, create a session, open its pairing page, see its
// QR code redrawn when WhatsApp replaces it, scan the code the page shows
// (decoded here from the page's own image) with the simulated phone, see
// CONNECTED; watch the live stream while a contact writes from the sandbox
// panel (markup in the text and in the push name shown as text, never
// run), filter it, pause and resume it, reconnect it; create a webhook,
// send a test event and see its delivery; see a failed delivery and
// redeliver it; edit, disable and delete the webhook. The browser must
// report no console error, exception, CSP violation or dialog, and load
// nothing from elsewhere.
func TestDashboardInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	recv := newReceiver(t)
	cfg := apptest.SandboxConfig(t)
	// Two attempts, close together: a failing receiver fails a delivery
	// within the test's time.
	cfg.WebhookRetry = []time.Duration{0, 300 * time.Millisecond}
	// The first QR code shows 15 s rather than whatsmeow's minute: the page
	// must redraw a replaced code, and a minute would be most of the test.
	srv := apptest.StartWith(t, cfg, func(o *app.Options) {
		o.QRTimeouts = whatsapp.QRTimeouts{First: 15 * time.Second}
	})
	phones := srv.Network(t)
	if err := phones.SetPushName(contactPhone, xssPushName); err != nil {
		t.Fatal(err)
	}
	assertPolicy(t, srv.URL)

	b := newBrowser(t, srv.URL, 5*time.Minute, nil)
	shots := map[string][]byte{}

	// The token, pasted once.
	b.run(t, "signing in",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#new-session-name", chromedp.ByQuery),
	)
	var stored string
	b.run(t, "reading sessionStorage", chromedp.Evaluate(`sessionStorage.getItem("wagraph.token")`, &stored))
	if stored != apptest.AdminToken {
		t.Errorf("sessionStorage holds %q, want the token pasted", stored)
	}

	// A session, created and paired.
	var loc string
	b.run(t, "creating a session and opening its pairing page",
		chromedp.SendKeys("#new-session-name", "Shop", chromedp.ByQuery),
		chromedp.Click("#create-session", chromedp.ByQuery),
		chromedp.WaitVisible("#session-token", chromedp.ByQuery),
		chromedp.Click("#pair-new", chromedp.ByQuery),
		chromedp.WaitVisible(`#qr[data-n="1"]`, chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	_, after, ok := strings.Cut(loc, "#/sessions/")
	sessionID, _, _ := strings.Cut(after, "/")
	if !ok || sessionID == "" {
		t.Fatalf("pairing page at %s", loc)
	}
	var pairing []byte
	b.run(t, "capturing the page", chromedp.CaptureScreenshot(&pairing))
	shots["pairing.png"] = pairing
	first := pageQR(t, b, srv, sessionID)
	// WhatsApp replaces the code: whatsmeow shows the first for 60 s (15 s
	// here), the next ones for 20 s each. The page redraws it in place; the
	// phone scans the code it shows then.
	b.runFor(t, "waiting for the next QR code", 90*time.Second, chromedp.WaitVisible(`#qr[data-n="2"]`, chromedp.ByQuery, chromedp.RetryInterval(time.Second)))
	code := pageQR(t, b, srv, sessionID)
	if code == first {
		t.Fatalf("the page's second code is its first: %q", code)
	}
	if err := phones.ScanQR(code, ownerPhone); err != nil {
		t.Fatalf("the simulated phone scanned the page's QR code: %v", err)
	}
	var connected string
	b.run(t, "waiting for the page to turn CONNECTED",
		chromedp.WaitVisible("#pair-connected", chromedp.ByQuery),
		chromedp.Text("#pair-status", &connected, chromedp.ByQuery),
	)
	if !strings.Contains(connected, "CONNECTED") {
		t.Errorf("pairing status %q", connected)
	}

	// The live stream, fed from the sandbox panel.
	b.run(t, "opening the event stream",
		chromedp.Click("#pair-connected a.button.primary", chromedp.ByQuery),
		chromedp.WaitVisible("#sandbox-panel", chromedp.ByQuery),
	)
	waitSubscribers(t, srv, 1)
	sendFromPanel(t, b, "Hello from the sandbox")
	sendFromPanel(t, b, xssText)
	b.run(t, "sending an image from the panel",
		chromedp.SetUploadFiles("#sb-image", []string{writePNG(t)}, chromedp.ByQuery),
		chromedp.SendKeys("#sb-caption", "a red square", chromedp.ByQuery),
		chromedp.Click("#sb-send-image", chromedp.ByQuery),
		waitEvent("[image] a red square"),
	)
	var imgs int
	var summary string
	b.run(t, "reading the stream",
		chromedp.Evaluate(`document.querySelectorAll("#event-list img, #event-list b").length`, &imgs),
		chromedp.Evaluate(eventText(xssText), &summary),
	)
	if imgs != 0 {
		t.Errorf("the stream holds %d elements made from a contact's text or name; it must show them as text", imgs)
	}
	if want := xssPushName + ": " + xssText; summary != want {
		t.Errorf("the stream shows %q, want %q as text", summary, want)
	}
	var stream []byte
	b.run(t, "capturing the stream", chromedp.CaptureScreenshot(&stream))
	shots["events.png"] = stream

	// Paused, the stream shows nothing new; resumed, it replays what was
	// stored meanwhile, once. Reconnected, the same.
	b.run(t, "pausing", chromedp.Click("#stream-pause", chromedp.ByQuery), chromedp.WaitVisible(`#stream-state[data-state="paused"]`, chromedp.ByQuery))
	contactSends(t, srv, sessionID, "written while paused")
	waitStored(t, srv, sessionID, "written while paused")
	if n := countEvents(t, b, "written while paused"); n != 0 {
		t.Errorf("a paused stream shows %d new events", n)
	}
	b.run(t, "resuming", chromedp.Click("#stream-pause", chromedp.ByQuery), waitEvent("written while paused"))
	b.run(t, "reconnecting", chromedp.Click("#stream-reconnect", chromedp.ByQuery),
		chromedp.WaitVisible(`#live-state[data-state="reconnecting"]`, chromedp.ByQuery))
	contactSends(t, srv, sessionID, "written during the reconnect")
	b.run(t, "after the reconnect", waitEvent("written during the reconnect"), chromedp.WaitVisible(`#live-state[data-state="live"]`, chromedp.ByQuery))
	for _, text := range []string{"Hello from the sandbox", xssText, "written while paused", "written during the reconnect"} {
		if n := countEvents(t, b, text); n != 1 {
			t.Errorf("the stream shows %q %d times, want once", text, n)
		}
	}

	// Filtered to inbound messages, the stream leaves out the contact's
	// presence stored before the message.
	var lastSeq int
	b.run(t, "filtering",
		chromedp.Click("#kinds-summary", chromedp.ByQuery),
		chromedp.Click(`#kinds input[data-kind="INBOUND_MESSAGE_UPSERT"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#kinds-summary`, chromedp.ByQuery),
		chromedp.Evaluate(`Number(document.querySelector("#event-list li").dataset.seq)`, &lastSeq),
	)
	waitSubscribers(t, srv, 1)
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxPresence(sessionId: $s, from: $f, state: "composing") }`,
		map[string]any{"s": sessionID, "f": contactPhone}, nil)
	contactSends(t, srv, sessionID, "after the filter")
	var kinds []string
	b.run(t, "reading the filtered stream", waitEvent("after the filter"), chromedp.Evaluate(fmt.Sprintf(
		`[...document.querySelectorAll("#event-list li")].filter(e => Number(e.dataset.seq) > %d).map(e => e.dataset.kind)`, lastSeq), &kinds))
	if strings.Join(kinds, ",") != "INBOUND_MESSAGE_UPSERT" {
		t.Errorf("the stream filtered to INBOUND_MESSAGE_UPSERT shows %v since the filter", kinds)
	}

	// A webhook: created, tested, its delivery shown.
	b.run(t, "creating a webhook",
		chromedp.Navigate(srv.URL+"/ui/#/sessions/"+sessionID+"/webhooks"),
		chromedp.WaitVisible("#wh-url", chromedp.ByQuery),
		chromedp.SendKeys("#wh-url", recv.URL, chromedp.ByQuery),
		chromedp.SendKeys("#wh-name", "CRM", chromedp.ByQuery),
		chromedp.Click("#wh-save", chromedp.ByQuery),
		chromedp.WaitVisible("#wh-secret", chromedp.ByQuery),
		chromedp.WaitVisible(`#webhook-rows tr[data-webhook-id] button[data-action="test"]`, chromedp.ByQuery),
		chromedp.Click(`#webhook-rows tr[data-webhook-id] button[data-action="test"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#delivery-rows tr[data-status="DELIVERED"]`, chromedp.ByQuery),
	)
	var testRow string
	b.run(t, "reading the test delivery", chromedp.Text(`#delivery-rows tr[data-status="DELIVERED"]`, &testRow, chromedp.ByQuery))
	if !strings.Contains(testRow, string(events.WebhookTest)) || !strings.Contains(testRow, "200 in") {
		t.Errorf("the test delivery's row reads %q; want %s answered 200", testRow, events.WebhookTest)
	}
	if got := recv.kinds(); len(got) != 1 || got[0] != "webhook.test" {
		t.Errorf("the receiver got %v, want one webhook.test", got)
	}

	// A failed delivery, redelivered from the page.
	recv.status.Store(http.StatusInternalServerError)
	msgID := contactSends(t, srv, sessionID, "the message the CRM missed")
	failed := `#delivery-rows tr[data-status="FAILED"][data-kind="INBOUND_MESSAGE_UPSERT"]`
	var eventID string
	b.run(t, "waiting for the failed delivery",
		chromedp.WaitVisible(failed, chromedp.ByQuery),
		chromedp.AttributeValue(failed, "data-event-id", &eventID, nil, chromedp.ByQuery),
		chromedp.Click(failed+" button.link", chromedp.ByQuery),
		chromedp.WaitVisible(failed+" + tr.attempts", chromedp.ByQuery),
	)
	var codes []string
	sel, _ := json.Marshal(failed + " + tr.attempts tbody tr")
	b.run(t, "reading its attempts", chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll(%s)].map(r => r.children[2].textContent)`, sel), &codes))
	if strings.Join(codes, ",") != "500,500" {
		t.Errorf("the failed delivery's attempts show status codes %v; want two answered 500", codes)
	}
	recv.status.Store(http.StatusOK)
	redelivered := fmt.Sprintf(`#delivery-rows tr[data-status="DELIVERED"][data-event-id=%q]`, eventID)
	b.run(t, "redelivering it",
		chromedp.Click(failed+` button[data-action="redeliver"]`, chromedp.ByQuery),
		chromedp.WaitVisible(redelivered, chromedp.ByQuery),
	)
	if n := recv.count(eventID, http.StatusOK); n != 1 {
		t.Errorf("the receiver accepted event %s %d times after the redelivery, want 1", eventID, n)
	}
	if !recv.sawText(eventID, msgID) {
		t.Errorf("the redelivered event %s is not the message %s", eventID, msgID)
	}

	// Edited (a new name, one kind), disabled, deleted: each from the list.
	wh := `#webhook-rows tr[data-webhook-id]`
	var edited string
	b.run(t, "editing the webhook",
		chromedp.Click(`a[href$="/webhooks"]`, chromedp.ByQuery),
		chromedp.Click(wh+` button[data-action="edit"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#wh-url").value !== ""`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Evaluate(`document.querySelector("#wh-name").value = ""`, nil),
		chromedp.SendKeys("#wh-name", "CRM inbound", chromedp.ByQuery),
		chromedp.Click("#wh-every", chromedp.ByQuery),
		chromedp.Click(`.webhook-form input[data-kind="INBOUND_MESSAGE_UPSERT"]`, chromedp.ByQuery),
		chromedp.Click("#wh-save", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#webhook-rows").textContent.includes("CRM inbound")`, nil, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Click(wh+` button[data-action="disable"]`, chromedp.ByQuery),
		chromedp.WaitVisible(wh+` button[data-action="enable"]`, chromedp.ByQuery),
		chromedp.Text(wh, &edited, chromedp.ByQuery),
	)
	var hooks struct {
		Webhooks struct {
			Items []struct {
				DisplayName string
				Enabled     bool
				Events      []string
			}
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { webhooks(sessionId: $s) { items { displayName enabled events } } }`, map[string]any{"s": sessionID}, &hooks)
	if items := hooks.Webhooks.Items; len(items) != 1 || items[0].DisplayName != "CRM inbound" || items[0].Enabled ||
		strings.Join(items[0].Events, ",") != "INBOUND_MESSAGE_UPSERT" {
		t.Errorf("after the page's edit and disable the webhook is %+v (its row reads %q)", items, edited)
	}
	b.run(t, "deleting the webhook",
		chromedp.Click(wh+` button[data-action="delete"]`, chromedp.ByQuery),
		chromedp.Click(wh+` button[data-action="delete"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(wh, chromedp.ByQuery),
	)
	srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { webhooks(sessionId: $s) { items { displayName enabled events } } }`, map[string]any{"s": sessionID}, &hooks)
	if len(hooks.Webhooks.Items) != 0 {
		t.Errorf("after the page's delete: %+v", hooks.Webhooks.Items)
	}

	b.report(t)
	writeShots(t, shots)
}

// writeShots checks that each screenshot is a PNG and, with
// -update-screenshots and the test passed, writes it into docs/screenshots
// (the README's).
func writeShots(t *testing.T, shots map[string][]byte) {
	t.Helper()
	for name, shot := range shots {
		if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
		if *updateScreenshots && !t.Failed() {
			dst := filepath.Join("..", "..", "docs", "screenshots", name)
			if err := os.WriteFile(dst, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", dst)
		}
	}
}

// assertPolicy checks the headers of the dashboard's page and files.
func assertPolicy(t *testing.T, origin string) {
	t.Helper()
	for _, path := range []string{"/ui/", "/ui/app.js", "/ui/app.css"} {
		res, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
		csp := res.Header.Get("Content-Security-Policy")
		if csp != webui.DashboardPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: the policy lacks %s", path, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: the policy allows something unsafe: %s", path, csp)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", path, got)
		}
	}
}

// pageQR reads the QR code the pairing page shows, from a screenshot of
// its image, and checks it is the session's current one.
func pageQR(t *testing.T, b *browser, srv *apptest.Server, sessionID string) string {
	t.Helper()
	var shot []byte
	b.run(t, "capturing the QR code",
		chromedp.Poll(`(() => { const i = document.querySelector("#qr"); return i.complete && i.naturalWidth > 0; })()`, nil),
		chromedp.Screenshot("#qr", &shot, chromedp.ByQuery))
	code := decodeQR(t, shot)
	var cur struct{ Session struct{ QrCode string } }
	srv.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { qrCode } }`, map[string]any{"id": sessionID}, &cur)
	if code != cur.Session.QrCode {
		t.Errorf("the page shows QR code %q, the session's current one is %q", code, cur.Session.QrCode)
	}
	return code
}

// decodeQR reads the QR code in a screenshot of the page's image.
func decodeQR(t *testing.T, shot []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("QR screenshot: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	// The image holds the code alone, at its own size: decoded as a pure
	// code, gozxing read every one of 1,500 pairing links, where its
	// finder-pattern search missed 1.4% of them.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		res, err = qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	}
	if err != nil {
		name := filepath.Join(os.TempDir(), strings.ReplaceAll(t.Name(), "/", "_")+"-qr.png")
		_ = os.WriteFile(name, shot, 0o644)
		t.Fatalf("no QR code in the page's image (%s): %v", name, err)
	}
	return res.GetText()
}

// eventText is a script giving the summary of the stream's event whose
// summary contains text ("" when none).
func eventText(text string) string {
	q, _ := json.Marshal(text)
	return fmt.Sprintf(`(() => { for (const e of document.querySelectorAll("#event-list .event-summary")) if (e.textContent.includes(%s)) return e.textContent; return ""; })()`, q)
}

// waitEvent waits until the stream shows an event whose summary contains
// text.
func waitEvent(text string) chromedp.Action {
	return chromedp.Poll(eventText(text)+` !== ""`, nil, chromedp.WithPollingTimeout(30*time.Second))
}

func countEvents(t *testing.T, b *browser, text string) int {
	t.Helper()
	q, _ := json.Marshal(text)
	var n int
	b.run(t, "counting events", chromedp.Evaluate(fmt.Sprintf(
		`[...document.querySelectorAll("#event-list .event-summary")].filter(e => e.textContent.includes(%s)).length`, q), &n))
	return n
}

// sendFromPanel sends text as the contact from the sandbox panel and
// waits for it in the stream.
func sendFromPanel(t *testing.T, b *browser, text string) {
	t.Helper()
	b.run(t, "sending "+text+" from the panel",
		chromedp.SendKeys("#sb-text", text, chromedp.ByQuery),
		chromedp.Click("#sb-send-text", chromedp.ByQuery),
		waitEvent(text),
	)
}

// contactSends has the contact write to the session through the API, as
// the panel does, and returns the message id.
func contactSends(t *testing.T, srv *apptest.Server, sessionID, text string) string {
	t.Helper()
	var r struct{ SandboxSendText string }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $t: String!) { sandboxSendText(sessionId: $s, from: $f, text: $t) }`,
		map[string]any{"s": sessionID, "f": contactPhone, "t": text}, &r)
	return r.SandboxSendText
}

// waitStored waits until the session's log holds the contact's text.
func waitStored(t *testing.T, srv *apptest.Server, sessionID, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var r struct {
			Events struct {
				Edges []struct{ Node struct{ Data map[string]any } }
			}
		}
		srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { events(sessionId: $s, kinds: [INBOUND_MESSAGE_UPSERT], first: 500) { edges { node { data } } } }`,
			map[string]any{"s": sessionID}, &r)
		for _, e := range r.Events.Edges {
			if e.Node.Data["text"] == text {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%q never stored", text)
}

// waitSubscribers waits until the server streams n event subscriptions:
// the page's subscription then gets every event stored from now on.
func waitSubscribers(t *testing.T, srv *apptest.Server, n int) {
	t.Helper()
	want := fmt.Sprintf("wagraph_subscribers %d\n", n)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if res := srv.Do(t, "GET", "/metrics", apptest.AdminToken, "", nil); strings.Contains(string(res.Body), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server never had %d event subscribers", n)
}

// writePNG writes a small image for the panel to send.
func writePNG(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 48, 48))
	for i := range img.Pix {
		if i%4 == 0 || i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	img.Set(0, 0, color.Black)
	p := filepath.Join(t.TempDir(), "red.png")
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
