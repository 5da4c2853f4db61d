package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestInboundAndControls: what a simulated contact sends reaches the
// session's message store; reactions, receipts and presence are accepted;
// GraphQL sendGroupInvite works.
func TestInboundAndControls(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550009002"

	var sent struct{ SandboxSendText string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxSendText(sessionId: $s, from: $f, text: "hi there") }`,
		map[string]any{"s": sess.ID, "f": contact}, &sent)
	stored := waitStored(t, s, sess.ID, sent.SandboxSendText)
	if stored.Status != "received" || stored.FromMe || stored.Type != "text" || str(stored.Text) != "hi there" || stored.Chat != contact+"@s.whatsapp.net" {
		t.Errorf("stored inbound text: %+v", stored)
	}

	var img struct{ SandboxSendImage string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $src: String!) { sandboxSendImage(sessionId: $s, from: $f, source: $src, caption: "look") }`,
		map[string]any{"s": sess.ID, "f": contact, "src": b64(pngImage(t, 20, 20))}, &img)
	if m := waitStored(t, s, sess.ID, img.SandboxSendImage); m.Type != "image" || str(m.Caption) != "look" {
		t.Errorf("stored inbound image: %+v", m)
	}

	// A quote of the stored inbound message arrives as a quote.
	id := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "answering", "quoted": sent.SandboxSendText})
	if m := received(t, s, contact, id); str(m.QuotedID) != sent.SandboxSendText {
		t.Errorf("quote: %+v", m)
	}
	for _, q := range []string{
		`mutation($s: ID!, $f: String!, $m: ID!) { sandboxReact(sessionId: $s, from: $f, messageId: $m, emoji: "👍") }`,
		`mutation($s: ID!, $f: String!, $m: ID!) { sandboxReceipt(sessionId: $s, from: $f, messageId: $m, type: "read") }`,
		`mutation($s: ID!, $f: String!) { sandboxPresence(sessionId: $s, from: $f, state: "composing") }`,
	} {
		vars := map[string]any{"s": sess.ID, "f": contact, "m": id}
		if !strings.Contains(q, "$m") {
			delete(vars, "m")
		}
		s.MustGraphQL(t, apptest.AdminToken, q, vars, nil)
	}
	res := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sandboxPresence(sessionId: $s, from: "4915550009002", state: "dancing") }`, map[string]any{"s": sess.ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || !strings.Contains(res.Errors[0].Message, "composing") {
		t.Errorf("bad presence state: %+v", res.Errors)
	}

	var g struct{ CreateGroup struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Invite"}) { id } }`, map[string]any{"s": sess.ID}, &g)
	var inv struct{ SendGroupInvite struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!, $n: String!) { sendGroupInvite(sessionId: $s, jid: $j, number: $n, message: "Come") { messageId } }`,
		map[string]any{"s": sess.ID, "j": g.CreateGroup.ID, "n": contact}, &inv)
	if m := received(t, s, contact, inv.SendGroupInvite.MessageID); !strings.HasPrefix(str(m.Text), "Come\n\nhttps://chat.whatsapp.com/") {
		t.Errorf("invite text %q", str(m.Text))
	}
}

type storedMessage struct {
	ID, Chat, Sender, Type, Status string
	FromMe                         bool
	Text, Caption                  *string
}

func waitStored(t *testing.T, s *apptest.Server, sessionID, id string) storedMessage {
	t.Helper()
	for range 300 {
		var out struct{ Message *storedMessage }
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { id chat sender type status fromMe text caption } }`,
			map[string]any{"s": sessionID, "m": id}, &out)
		if out.Message != nil {
			return *out.Message
		}
		sleep()
	}
	t.Fatalf("message %s was not stored", id)
	return storedMessage{}
}

// TestSessionLifecycle: a dropped connection comes back by itself;
// disconnect and connect; logout through REST; removal by the phone; and
// deleting a linked session unlinks its device.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	net := s.Network(t)
	sess := s.LinkSession(t, "4915550010001")

	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sandboxDropConnection(sessionId: $s) }`, map[string]any{"s": sess.ID}, nil)
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)

	var d struct{ DisconnectSession struct{ Status string } }
	apptest.Settle(t, net, sess)
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { disconnectSession(id: $s) { status } }`, map[string]any{"s": sess.ID}, &d)
	if d.DisconnectSession.Status != "DISCONNECTED" {
		t.Errorf("after disconnect: %s", d.DisconnectSession.Status)
	}
	res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"4915550010002","text":"x"}`)
	if res.Status != http.StatusConflict || !strings.Contains(res.Message(t), "DISCONNECTED") {
		t.Errorf("send while disconnected: %d %s", res.Status, res.Body)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { connectSession(id: $s) { status } }`, map[string]any{"s": sess.ID}, nil)
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)
	apptest.Settle(t, net, sess)

	res = s.REST(t, "PUT", "/session/"+sess.ID+"/logout", apptest.AdminToken, "")
	if res.Status != http.StatusOK || string(res.Body) != `{"status":"success","message":"Session `+sess.ID+` logged out"}`+"\n" {
		t.Fatalf("logout: %d %s", res.Status, res.Body)
	}
	s.WaitStatus(t, sess.ID, "LOGGED_OUT", nil)
	if devs := net.LinkedDevices(sess.Phone); len(devs) != 0 {
		t.Errorf("the account still has linked devices %v", devs)
	}

	other := s.LinkSession(t, "4915550010003")
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sandboxLogoutDevice(sessionId: $s) }`, map[string]any{"s": other.ID}, nil)
	s.WaitStatus(t, other.ID, "LOGGED_OUT", nil)

	fourth := s.LinkSession(t, "4915550010005")
	apptest.Settle(t, net, fourth)
	var lo struct{ Logout struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { logout(sessionId: $s) { id } }`, map[string]any{"s": fourth.ID}, &lo)
	s.WaitStatus(t, fourth.ID, "LOGGED_OUT", nil)
	if devs := net.LinkedDevices(fourth.Phone); len(devs) != 0 || lo.Logout.ID != fourth.ID {
		t.Errorf("GraphQL logout: %+v, devices %v", lo, devs)
	}

	third := s.LinkSession(t, "4915550010004")
	apptest.Settle(t, net, third)
	if res := s.REST(t, "DELETE", "/session/"+third.ID, apptest.AdminToken, ""); res.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if devs := net.LinkedDevices(third.Phone); len(devs) != 0 {
		t.Errorf("deleting the session left its device linked: %v", devs)
	}
}

// TestAccessAndSandboxOff: a token that does not reach a session gets 404
// for its WhatsApp operations; a session token reaches its own; outside
// sandbox mode the controls say so, and sandboxMode tells which mode.
func TestAccessAndSandboxOff(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	sess := s.LinkSession(t, "4915550011001")
	var u struct{ CreateUser struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "other") { token } }`, nil, &u)
	var tok struct{ CreateSessionToken string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sess.ID}, &tok)

	body := `{"number":"4915550011002","text":"hi"}`
	if res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", u.CreateUser.Token, body); res.Status != http.StatusNotFound {
		t.Errorf("another user's send: %d %s", res.Status, res.Body)
	}
	if res := s.REST(t, "GET", "/session/"+sess.ID+"/privacy", u.CreateUser.Token, ""); res.Status != http.StatusNotFound {
		t.Errorf("another user's privacy read: %d %s", res.Status, res.Body)
	}
	if res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", tok.CreateSessionToken, body); res.Status != http.StatusOK {
		t.Errorf("the session token's send: %d %s", res.Status, res.Body)
	}
	res := s.GraphQL(t, u.CreateUser.Token, `mutation($s: ID!) { sandboxLinkDevice(sessionId: $s, phone: "4915550011003") { status } }`, map[string]any{"s": sess.ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("another user's sandbox control: %+v", res.Errors)
	}

	plain := apptest.Start(t, apptest.Config(t))
	res = plain.GraphQL(t, apptest.AdminToken, `{ sandboxInbox(phone: "4915550011002") { id } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Message != "sandbox mode is off" {
		t.Errorf("sandbox control outside sandbox mode: %+v", res.Errors)
	}
	// sandboxMode says which, to any token, and is never an error.
	for _, tt := range []struct {
		srv  *apptest.Server
		tok  string
		want bool
	}{{s, u.CreateUser.Token, true}, {s, tok.CreateSessionToken, true}, {plain, apptest.AdminToken, false}} {
		var m struct{ SandboxMode bool }
		tt.srv.MustGraphQL(t, tt.tok, `{ sandboxMode }`, nil, &m)
		if m.SandboxMode != tt.want {
			t.Errorf("sandboxMode %v, want %v", m.SandboxMode, tt.want)
		}
	}
}
