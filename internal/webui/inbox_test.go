package webui_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestInboxInABrowser walks the inbox (issue 33, must show 3) in Chromium
// against a sandbox server whose session is linked: a contact has written
// more texts than a page holds; the chats page lists the chat with its
// unread count and last text; the chat page shows the newest texts at the
// bottom and, scrolled to the top, the older ones; a text typed in the page
// reaches the contact's simulated phone; a text the contact sends then
// appears without a reload; a reaction picked in the page reaches the
// phone. The browser reports no console error, exception or request to
// another origin.
func TestInboxInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	const (
		contact = "4915550330001"
		older   = 40 // more than the chat page's first page (30)
	)
	srv, sess := apptest.StartLinked(t)
	phones := srv.Network(t)
	var last string
	for i := 1; i <= older; i++ {
		var err error
		if last, err = phones.SendText(contact, sess.Phone, fmt.Sprintf("history %02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitMessageStored(t, srv, sess.ID, last)

	b := newBrowser(t, srv.URL, 4*time.Minute, nil)
	shots := map[string][]byte{}
	signIn(t, b)

	// The chats page: the contact's chat, unread, its last text.
	row := fmt.Sprintf(`li.chat[data-jid="%s@s.whatsapp.net"]`, contact)
	b.run(t, "opening the chats page",
		chromedp.Navigate(srv.URL+"/ui/#/sessions/"+url.PathEscape(sess.ID)+"/chats"),
		chromedp.WaitVisible(row, chromedp.ByQuery),
	)
	var unread, lastLine string
	b.run(t, "reading the chat's row",
		chromedp.AttributeValue(row, "data-unread", &unread, nil, chromedp.ByQuery),
		chromedp.Text(row+" .chat-last", &lastLine, chromedp.ByQuery),
	)
	if unread != fmt.Sprint(older) || lastLine != fmt.Sprintf("history %02d", older) {
		t.Errorf("the chat's row: %s unread, last %q; want %d and %q", unread, lastLine, older, fmt.Sprintf("history %02d", older))
	}
	var chats []byte
	b.run(t, "capturing the chats page", chromedp.CaptureScreenshot(&chats))
	shots["chats.png"] = chats

	// The chat: the newest page at the bottom, the older ones on scrolling up.
	b.run(t, "opening the chat",
		chromedp.Click(row+" a", chromedp.ByQuery),
		chromedp.WaitVisible(`#message-list li.message`, chromedp.ByQuery),
	)
	var shown int
	b.run(t, "counting the first page", chromedp.Evaluate(`document.querySelectorAll("#message-list li.message").length`, &shown))
	if shown >= older {
		t.Fatalf("the chat's first page shows %d messages; want fewer than the %d stored, so that scrolling has something to load", shown, older)
	}
	var bottom string
	b.run(t, "reading the newest", chromedp.Evaluate(`document.querySelector("#message-list li.message:last-child .text").textContent`, &bottom))
	if bottom != fmt.Sprintf("history %02d", older) {
		t.Errorf("the message at the bottom is %q, want the newest, %q", bottom, fmt.Sprintf("history %02d", older))
	}
	b.run(t, "scrolling to the top to load the older messages",
		chromedp.Evaluate(`document.getElementById("message-scroll").scrollTop = 0`, nil),
		chromedp.Poll(fmt.Sprintf(`document.querySelectorAll("#message-list li.message").length === %d`, older), nil),
		chromedp.WaitVisible("#messages-start", chromedp.ByQuery),
	)
	var top string
	b.run(t, "reading the oldest", chromedp.Evaluate(`document.querySelector("#message-list li.message:first-child .text").textContent`, &top))
	if top != "history 01" {
		t.Errorf("the message at the top is %q, want the oldest, %q", top, "history 01")
	}

	// A text typed in the page reaches the phone.
	b.run(t, "sending a text from the page",
		chromedp.SendKeys("#compose-text", "typed in the inbox", chromedp.ByQuery),
		chromedp.Click("#compose-send", chromedp.ByQuery),
		chromedp.Poll(`[...document.querySelectorAll("#message-list li.message.mine .text")].some(e => e.textContent === "typed in the inbox")`, nil),
	)
	waitInbox(t, func() bool {
		for _, m := range phones.Inbox(contact) {
			if m.Message.GetConversation() == "typed in the inbox" || m.Message.GetExtendedTextMessage().GetText() == "typed in the inbox" {
				return true
			}
		}
		return false
	}, "the typed text on the contact's phone")

	// A text from the contact appears without a reload.
	if _, err := phones.SendText(contact, sess.Phone, "live from the phone"); err != nil {
		t.Fatal(err)
	}
	b.run(t, "waiting for the contact's new text",
		chromedp.Poll(`[...document.querySelectorAll("#message-list li.message.theirs .text")].some(e => e.textContent === "live from the phone")`, nil),
	)

	// A reaction picked in the page reaches the phone.
	b.run(t, "reacting to the contact's text",
		chromedp.Click(`#message-list li.message.theirs:last-child button.react`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#message-list li.message.theirs:last-child .reactions") !== null`, nil),
	)
	waitInbox(t, func() bool {
		for _, m := range phones.Inbox(contact) {
			if m.Message.GetReactionMessage().GetText() == "👍" {
				return true
			}
		}
		return false
	}, "the reaction on the contact's phone")
	var chat []byte
	b.run(t, "capturing the chat page", chromedp.CaptureScreenshot(&chat))
	shots["chat.png"] = chat

	b.report(t)
	writeShots(t, shots)
}

// waitInbox waits up to 20 s for what a simulated phone received.
func waitInbox(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20 s", strings.TrimSpace(what))
		}
	}
}

// waitMessageStored waits up to 30 s for the session to have stored message id.
func waitMessageStored(t *testing.T, srv *apptest.Server, sessionID, id string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var d struct{ Message *struct{ ID string } }
		srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { id } }`,
			map[string]any{"s": sessionID, "m": id}, &d)
		if d.Message != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s not stored within 30 s", id)
		}
	}
}
