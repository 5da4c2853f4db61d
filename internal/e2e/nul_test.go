package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestNULFromWhatsAppIsStored: a text with U+0000 from a contact is stored
// once, with the NUL replaced by U+FFFD, on both backends (PostgreSQL
// refuses NUL in text and jsonb): the events query shows it, the network
// holds nothing unacknowledged, and a reconnect delivers it no second time.
func TestNULFromWhatsAppIsStored(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	net := s.Network(t)
	const contact = "4915550021002"
	dev, err := whatsapp.ParseJID(sess.JID)
	if err != nil {
		t.Fatal(err)
	}

	id, err := net.SendText(contact, sess.Phone, "before\x00after")
	if err != nil {
		t.Fatal(err)
	}
	const want = "before\uFFFDafter"
	if m := waitStored(t, s, sess.ID, id); str(m.Text) != want || m.Status != "received" {
		t.Fatalf("stored %q (%s), want %q received", str(m.Text), m.Status, want)
	}
	waitAcked(t, net.Unacked, dev)

	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sandboxDropConnection(sessionId: $s) }`, map[string]any{"s": sess.ID}, nil)
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)
	apptest.Settle(t, net, sess)
	waitAcked(t, net.Unacked, dev)

	var p struct {
		Events struct{ Edges []struct{ Node gqlEvent } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { events(sessionId: $s, kinds: [INBOUND_MESSAGE_UPSERT], first: 100) { edges { node { id seq kind sessionId occurredAt data } } } }`,
		map[string]any{"s": sess.ID}, &p)
	n := 0
	for _, e := range p.Events.Edges {
		var d struct{ ID string }
		if err := json.Unmarshal(e.Node.Data, &d); err != nil {
			t.Fatalf("event data %s: %v", e.Node.Data, err)
		}
		if d.ID != id {
			continue
		}
		n++
		if got := e.Node.text(); got != want {
			t.Errorf("event text %q, want %q", got, want)
		}
	}
	if n != 1 {
		t.Errorf("%d events of message %s, want exactly 1", n, id)
	}
}

// waitAcked waits until the network holds no stanza the device has not
// acknowledged: an event the app failed to store is never acknowledged.
func waitAcked(t *testing.T, unacked func(whatsapp.JID) int, dev whatsapp.JID) {
	t.Helper()
	for range 200 {
		if unacked(dev) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the network still holds %d unacknowledged stanzas for %s: an event was not stored", unacked(dev), dev)
}

// TestNULPushNameKeepsStatusSaves: a profile name with U+0000 set on the
// phone is stored with the NUL replaced, and the status saves after it
// still land: after a restart the session is DISCONNECTED as it was left,
// with that name.
func TestNULPushNameKeepsStatusSaves(t *testing.T) {
	t.Parallel()
	const phone = "4915550021003"
	cfg := apptest.SandboxConfig(t)
	first := apptest.StartLive(t, cfg)
	sess := first.LinkSession(t, phone)
	net := first.Network(t)
	// The device writes the name first: the phone's change is then a patch
	// it is told of (a first fetch of the collection emits no events).
	first.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateProfileName(sessionId: $s, name: "Ada") }`, map[string]any{"s": sess.ID}, nil)
	first.WaitStatus(t, sess.ID, "CONNECTED", func(m map[string]any) bool { return m["pushName"] == "Ada" })
	apptest.Settle(t, net, sess)
	if err := net.SetPushName(phone, "Ada\x00Lovelace"); err != nil {
		t.Fatal(err)
	}
	const want = "Ada\uFFFDLovelace"
	var got struct {
		Session struct{ Status, PushName string }
	}
	for range 300 {
		first.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { session(id: $s) { status pushName } }`, map[string]any{"s": sess.ID}, &got)
		if got.Session.PushName != "Ada" {
			break
		}
		sleep()
	}
	if got.Session.PushName != want {
		t.Fatalf("push name %q, want %q", got.Session.PushName, want)
	}
	apptest.Settle(t, net, sess)
	var d struct{ DisconnectSession struct{ Status string } }
	first.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { disconnectSession(id: $s) { status } }`, map[string]any{"s": sess.ID}, &d)
	if d.DisconnectSession.Status != "DISCONNECTED" {
		t.Errorf("disconnect after the name: %q, want DISCONNECTED", d.DisconnectSession.Status)
	}
	first.Stop(t)

	// The stored record is what the next process starts from.
	second := apptest.StartLive(t, cfg)
	second.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { session(id: $s) { status pushName } }`, map[string]any{"s": sess.ID}, &got)
	if got.Session.PushName != want {
		t.Errorf("stored push name %q, want %q (the status saves after the name must land)", got.Session.PushName, want)
	}
	second.WaitStatus(t, sess.ID, "CONNECTED", nil)
	second.Track(sess)
}

// TestNULRefusedInGraphQL: a NUL in any text argument is BAD_USER_INPUT
// naming the field, as REST refuses it, and nothing is sent.
func TestNULRefusedInGraphQL(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	net := s.Network(t)
	const to = "4915550021005"
	cases := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"sendText variable", `mutation($s: ID!, $in: SendTextInput!) { sendText(sessionId: $s, input: $in) { messageId } }`,
			map[string]any{"s": sess.ID, "in": map[string]any{"number": to, "text": "a\x00b"}}, "input.text"},
		{"sendText literal", `mutation($s: ID!) { sendText(sessionId: $s, input: {number: "` + to + `", text: "a\u0000b"}) { messageId } }`,
			map[string]any{"s": sess.ID}, "input.text"},
		{"sendLocation name", `mutation($s: ID!, $in: SendLocationInput!) { sendLocation(sessionId: $s, input: $in) { messageId } }`,
			map[string]any{"s": sess.ID, "in": map[string]any{"number": to, "latitude": 1, "longitude": 2, "name": "\x00"}}, "input.name"},
		{"updateProfileName name", `mutation($s: ID!, $n: String!) { updateProfileName(sessionId: $s, name: $n) }`,
			map[string]any{"s": sess.ID, "n": "x\x00"}, "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := s.GraphQL(t, apptest.AdminToken, tc.query, tc.vars)
			if len(res.Errors) != 1 {
				t.Fatalf("errors %+v, want one", res.Errors)
			}
			e := res.Errors[0]
			if e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != tc.field || !strings.Contains(e.Message, `must not contain NUL (\u0000)`) {
				t.Errorf("error %+v, want BAD_USER_INPUT naming %s", e, tc.field)
			}
		})
	}
	apptest.Settle(t, net, sess)
	if in := net.Inbox(to); len(in) != 0 {
		t.Errorf("the recipient received %d messages, want none", len(in))
	}
}

// TestNULFromSandboxPhone: the sandbox controls that act as a contact's
// phone take a text with U+0000, as a phone sends one (the API's rule for
// client text is not theirs): the text, a caption and an edit arrive and
// are stored and delivered with the NUL replaced by U+FFFD. The gateway's
// own sends still refuse it (TestNULRefusedInGraphQL).
func TestNULFromSandboxPhone(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550021006"
	var sent struct{ SandboxSendText string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $t: String!) { sandboxSendText(sessionId: $s, from: $f, text: $t) }`,
		map[string]any{"s": sess.ID, "f": contact, "t": "vor\x00nach"}, &sent)
	if m := waitStored(t, s, sess.ID, sent.SandboxSendText); str(m.Text) != "vor\uFFFDnach" || m.Status != "received" {
		t.Errorf("stored %q (%s), want %q received", str(m.Text), m.Status, "vor\uFFFDnach")
	}
	var img struct{ SandboxSendImage string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $src: String!, $c: String) { sandboxSendImage(sessionId: $s, from: $f, source: $src, caption: $c) }`,
		map[string]any{"s": sess.ID, "f": contact, "src": b64(pngImage(t, 8, 8)), "c": "Bild\x00unterschrift"}, &img)
	if m := waitStored(t, s, sess.ID, img.SandboxSendImage); str(m.Caption) != "Bild\uFFFDunterschrift" {
		t.Errorf("stored caption %q, want %q", str(m.Caption), "Bild\uFFFDunterschrift")
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $m: ID!, $t: String!) { sandboxEdit(sessionId: $s, from: $f, messageId: $m, text: $t) }`,
		map[string]any{"s": sess.ID, "f": contact, "m": sent.SandboxSendText, "t": "neu\x00er Text"}, nil)
	for range 300 {
		if m := waitStored(t, s, sess.ID, sent.SandboxSendText); str(m.Text) == "neu\uFFFDer Text" {
			break
		}
		sleep()
	}
	if m := waitStored(t, s, sess.ID, sent.SandboxSendText); str(m.Text) != "neu\uFFFDer Text" {
		t.Errorf("after the edit the stored text is %q, want %q", str(m.Text), "neu\uFFFDer Text")
	}
	// Delivered: the events carry the text as stored.
	found := false
	for _, d := range eventData(t, s, sess.ID, "INBOUND_MESSAGE_UPSERT") {
		found = found || (d["id"] == sent.SandboxSendText && d["text"] == "vor\uFFFDnach")
	}
	if !found {
		t.Error("no inbound-message.upsert event with the text as stored")
	}
}
