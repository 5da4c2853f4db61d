package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// sandboxAccountQuery reads what the network knows of an account: the read
// receipts and chat states it got, the presence it showed.
const sandboxAccountQuery = `query($p: String!) { sandboxAccount(phone: $p) {
  presence readReceipts { from messageId at } chatStates { from state at } } }`

type sandboxView struct {
	Presence     *string
	ReadReceipts []struct{ From, MessageID, At string }
	ChatStates   []struct{ From, State, At string }
}

func networkAccount(t *testing.T, s *apptest.Server, phone string) sandboxView {
	t.Helper()
	var out struct{ SandboxAccount sandboxView }
	s.MustGraphQL(t, apptest.AdminToken, sandboxAccountQuery, map[string]any{"p": phone}, &out)
	return out.SandboxAccount
}

// readBy lists the message ids phone's account got read receipts for from
// reader.
func (v sandboxView) readBy(reader string) []string {
	var ids []string
	for _, r := range v.ReadReceipts {
		if r.From == reader {
			ids = append(ids, r.MessageID)
		}
	}
	return ids
}

// TestMarkRead: markRead without ids reads every received message of the
// chat not yet read, and the contact's phone gets a read receipt for each
// (what the phone decrypted, not what the gateway believes); the chat is
// then read (chats.update, unreadCount 0), and a second markRead sends
// nothing. Named ids (REST) read those; a group's messages are read to
// their sender; bad input is refused naming the field, before anything
// is sent.
func TestMarkRead(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, contact, member = apptest.LinkedPhone, "4915550250002", "4915550250003"

	first, err := n.SendText(contact, phone, "Eins")
	if err != nil {
		t.Fatal(err)
	}
	second, err := n.SendText(contact, phone, "Zwei")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, second)
	inboundText(t, s, sess.ID, first)

	var ok struct{ MarkRead bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!) { markRead(sessionId: $s, chat: $c) }`,
		map[string]any{"s": sess.ID, "c": "+" + contact}, &ok)
	if !ok.MarkRead {
		t.Fatal("markRead answered false")
	}
	// whatsmeow writes the receipts and returns; the network takes them
	// a moment later.
	var got []string
	testclient.Until(t, 5*time.Second, "read receipts on the contact's phone", func() bool {
		got = networkAccount(t, s, contact).readBy(phone)
		return len(got) >= 2
	})
	if !sameSet(got, []string{first, second}) {
		t.Fatalf("the contact's phone got read receipts for %v, want %v", got, []string{first, second})
	}
	read := chatUpdates(t, s, sess.ID, contact+"@s.whatsapp.net")
	if len(read) != 1 || read[0]["read"] != true || read[0]["unreadCount"] != float64(0) {
		t.Errorf("chats.update of the chat: %v, want one with read true and unreadCount 0", read)
	}

	// Nothing unread left: no receipt is sent again.
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!) { markRead(sessionId: $s, chat: $c) }`,
		map[string]any{"s": sess.ID, "c": contact}, &ok)
	if got := networkAccount(t, s, contact).readBy(phone); len(got) != 2 {
		t.Errorf("after a second markRead the contact has %d read receipts, want still 2", len(got))
	}

	// Named ids, over REST.
	third, err := n.SendText(contact, phone, "Drei")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, third)
	res := s.REST(t, "POST", "/session/"+sess.ID+"/chat/"+contact+"/read", apptest.AdminToken, `{"messageIds":["`+third+`"]}`)
	if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != `{"status":"success","data":{}}` {
		t.Fatalf("REST markRead: %d %s", res.Status, res.Body)
	}
	testclient.Until(t, 5*time.Second, "a read receipt for "+third, func() bool {
		return slices.Contains(networkAccount(t, s, contact).readBy(phone), third)
	})

	// A group: the receipt goes to the member who wrote.
	group, err := n.CreateGroup(member, "Lesegruppe", phone)
	if err != nil {
		t.Fatal(err)
	}
	gid, err := n.SendGroupMessage(member, group, &waE2E.Message{Conversation: proto.String("Hallo Gruppe")}, false)
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, gid)
	res = s.REST(t, "POST", "/session/"+sess.ID+"/chat/"+group.String()+"/read", apptest.AdminToken, "")
	if res.Status != http.StatusOK {
		t.Fatalf("REST markRead of the group: %d %s", res.Status, res.Body)
	}
	testclient.Until(t, 5*time.Second, "the member's read receipt", func() bool {
		got = networkAccount(t, s, member).readBy(phone)
		return len(got) > 0
	})
	if !slices.Equal(got, []string{gid}) {
		t.Errorf("the member's phone got read receipts for %v, want [%s]", got, gid)
	}

	// Refusals, each naming its field; nothing is sent.
	sent := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "von mir"})
	for _, tt := range []struct{ path, body, field string }{
		{"/chat/015550250002/read", ``, "chat: use the international format"},
		{"/chat/" + contact + "/read", `{"messageIds":["` + sent + `"]}`, "messageIds[0]: message " + sent + " was sent by this account"},
		{"/chat/" + contact + "/read", `{"messageIds":[""]}`, "messageIds[0] must not be empty"},
		{"/chat/" + contact + "/read", `{"messageIds":["` + third + `"],"ids":[]}`, "ids"},
		{"/chat/" + group.String() + "/read", `{"messageIds":["3EB0NOTSTORED"]}`, "is not stored, so its sender is unknown"},
	} {
		res := s.REST(t, "POST", "/session/"+sess.ID+tt.path, apptest.AdminToken, tt.body)
		if res.Status/100 != 4 || !strings.Contains(res.Message(t), tt.field) {
			t.Errorf("POST %s %s: %d %q, want a refusal saying %q", tt.path, tt.body, res.Status, res.Message(t), tt.field)
		}
	}
	if got := networkAccount(t, s, contact).readBy(phone); len(got) != 3 {
		t.Errorf("refused markReads sent receipts: the contact has %d, want 3", len(got))
	}
}

// TestPresence: sendPresence shows typing, recording and pausing in a chat
// to the contact's phone, and the account's availability; the state and
// chat are checked first. subscribePresence makes the contact's
// availability reach the session as presence.update.
func TestPresence(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550250012"
	send := func(state string, chat any) apptest.GQLResponse {
		return s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!, $st: PresenceState!, $c: String) { sendPresence(sessionId: $s, state: $st, chat: $c) }`,
			map[string]any{"s": sess.ID, "st": state, "c": chat})
	}
	for _, st := range []string{"COMPOSING", "RECORDING", "PAUSED"} {
		if r := send(st, contact); len(r.Errors) != 0 {
			t.Fatalf("sendPresence %s: %v", st, r.Errors)
		}
	}
	var states []string
	testclient.Until(t, 5*time.Second, "the contact's phone shows the three chat states", func() bool {
		states = states[:0]
		for _, c := range networkAccount(t, s, contact).ChatStates {
			if c.From == phone {
				states = append(states, c.State)
			}
		}
		return len(states) == 3
	})
	if !slices.Equal(states, []string{"composing", "recording", "paused"}) {
		t.Errorf("chat states on the contact's phone %v, want composing, recording, paused", states)
	}
	// WhatsApp shows availability with the account's name, which the
	// phone gave the device when it linked (app state): it works at once.
	if r := send("AVAILABLE", nil); len(r.Errors) != 0 {
		t.Fatalf("sendPresence AVAILABLE with the phone's name: %v", r.Errors)
	}
	var named struct{ UpdateProfileName bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateProfileName(sessionId: $s, name: "Laden") }`, map[string]any{"s": sess.ID}, &named)
	if r := send("AVAILABLE", nil); len(r.Errors) != 0 {
		t.Fatalf("sendPresence AVAILABLE: %v", r.Errors)
	}
	testclient.Until(t, 5*time.Second, "the account shows itself available", func() bool {
		p := networkAccount(t, s, phone).Presence
		return p != nil && *p == "available"
	})
	for _, tt := range []struct {
		state string
		chat  any
		want  string
	}{
		{"COMPOSING", nil, "chat is required with COMPOSING"},
		{"AVAILABLE", contact, "chat goes with COMPOSING, RECORDING and PAUSED only"},
		{"PAUSED", "0155 5025 0012", "chat: use the international format"},
	} {
		r := send(tt.state, tt.chat)
		if len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, tt.want) {
			t.Errorf("sendPresence %s %v: %v, want BAD_USER_INPUT saying %q", tt.state, tt.chat, r.Errors, tt.want)
		}
	}

	// Subscribed, the contact's availability comes as presence.update.
	res := s.REST(t, "POST", "/session/"+sess.ID+"/presence/subscribe", apptest.AdminToken, `{"chat":"`+contact+`"}`)
	if res.Status != http.StatusOK {
		t.Fatalf("subscribe: %d %s", res.Status, res.Body)
	}
	// The subscription reaches the network a moment after the answer.
	testclient.Until(t, 5*time.Second, "the contact shows itself available to a subscriber", func() bool {
		r := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxPresence(sessionId: $s, from: $f, state: "available") }`,
			map[string]any{"s": sess.ID, "f": contact})
		return len(r.Errors) == 0
	})
	testclient.Until(t, 5*time.Second, "presence.update of the contact", func() bool {
		for _, d := range eventData(t, s, sess.ID, "PRESENCE_UPDATE") {
			if d["participantPhone"] == contact && d["presence"] == "available" {
				return true
			}
		}
		return false
	})
	if res := s.REST(t, "POST", "/session/"+sess.ID+"/presence/subscribe", apptest.AdminToken, `{"chat":"120363025246125888@g.us"}`); res.Status != http.StatusBadRequest || !strings.Contains(res.Message(t), "chat must be a user") {
		t.Errorf("subscribe to a group: %d %q", res.Status, res.Message(t))
	}
}

// TestConversationBetweenSessions: what one session shows and reads reaches
// the other session of the same gateway, as on two phones: its typing as
// presence.update, its read receipt as the message's status read.
func TestConversationBetweenSessions(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	const phoneA, phoneB = "4915550250021", "4915550250022"
	a := s.LinkSession(t, phoneA)
	b := s.LinkSession(t, phoneB)
	id := restSend(t, s, a.ID, "text", map[string]any{"number": phoneB, "text": "Liest du das?"})
	inboundText(t, s, b.ID, id)

	var ok struct{ SendPresence, MarkRead bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!) { sendPresence(sessionId: $s, state: COMPOSING, chat: $c) }`,
		map[string]any{"s": b.ID, "c": phoneA}, &ok)
	testclient.Until(t, 5*time.Second, "A sees B typing", func() bool {
		for _, d := range eventData(t, s, a.ID, "PRESENCE_UPDATE") {
			if d["participantPhone"] == phoneB && d["presence"] == "composing" {
				return true
			}
		}
		return false
	})
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!) { markRead(sessionId: $s, chat: $c) }`,
		map[string]any{"s": b.ID, "c": phoneA}, &ok)
	testclient.Until(t, 5*time.Second, "A's message read by B", func() bool {
		for _, d := range eventData(t, s, a.ID, "MESSAGES_UPDATE") {
			if d["id"] == id && d["status"] == "read" {
				return true
			}
		}
		return false
	})
}

// eventData is the data of session sessionID's stored events of kind.
func eventData(t *testing.T, s *apptest.Server, sessionID, kind string) []map[string]any {
	t.Helper()
	var p struct {
		Events struct{ Edges []struct{ Node gqlEvent } }
	}
	s.MustGraphQL(t, apptest.AdminToken, eventsQuery, map[string]any{"s": sessionID, "k": []string{kind}, "f": 500}, &p)
	out := make([]map[string]any, 0, len(p.Events.Edges))
	for _, e := range p.Events.Edges {
		var d map[string]any
		if err := json.Unmarshal(e.Node.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// chatUpdates is the data of the session's chats.update events of chat.
func chatUpdates(t *testing.T, s *apptest.Server, sessionID, chat string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range eventData(t, s, sessionID, "CHATS_UPDATE") {
		if d["id"] == chat {
			out = append(out, d)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
