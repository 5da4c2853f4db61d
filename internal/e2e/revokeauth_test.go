package e2e

import (
	"encoding/json"
	"testing"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestRevokeAndEditNeedTheSender reproduces issue 21 finding 6: a
// contact revoking or editing another's message by its id, in a direct
// chat and in a group, and from another chat. The message stays as it
// was and the event names who tried; the sender's own revoke and edit,
// and a group admin's revoke, are applied.
func TestRevokeAndEditNeedTheSender(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, a, b, host = apptest.LinkedPhone, "4915550061002", "4915550061003", "4915550061004"
	group, err := n.CreateGroup(host, "Wer darf löschen", me, a, b)
	if err != nil {
		t.Fatal(err)
	}

	direct, err := n.SendText(a, me, "von A, direkt")
	if err != nil {
		t.Fatal(err)
	}
	// A's first message sets up its Signal session with the device:
	// stored before A sends again, so two first messages do not race
	// (seen on PostgreSQL: later ones then fail to decrypt).
	waitInStore(t, s, sess.ID, direct)
	inGroup, err := n.SendGroupMessage(a, group, &waE2E.Message{Conversation: proto.String("von A, in der Gruppe")}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{direct, inGroup} {
		waitInStore(t, s, sess.ID, id)
	}
	// The account's own message, sent through the API; its phone is its
	// other device. Sent once A's messages are in: a send to A while its
	// first message is being decrypted races for the Signal session.
	mine := restSend(t, s, sess.ID, "text", map[string]any{"number": a, "text": "von mir"})
	note := restSend(t, s, sess.ID, "text", map[string]any{"number": me, "text": "Notiz"})
	waitInStore(t, s, sess.ID, mine)
	waitInStore(t, s, sess.ID, note)
	received(t, s, a, mine)

	// What a forger sends: the target's key as the target's sender's own
	// revoke or edit would carry it.
	revokeOf := func(chat, participant, id string) *waE2E.Message {
		return &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_REVOKE.Enum(),
			Key:  &waCommon.MessageKey{RemoteJID: proto.String(chat), FromMe: proto.Bool(true), ID: proto.String(id), Participant: proto.String(participant)},
		}}
	}
	editOf := func(chat, participant, id, text string) *waE2E.Message {
		return &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type:          waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(),
			Key:           &waCommon.MessageKey{RemoteJID: proto.String(chat), FromMe: proto.Bool(true), ID: proto.String(id), Participant: proto.String(participant)},
			EditedMessage: &waE2E.Message{Conversation: proto.String(text)},
		}}
	}
	direct1 := func(from string, msg *waE2E.Message) string {
		t.Helper()
		id, err := n.SendMessage(from, me, msg)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	inGroup1 := func(from string, msg *waE2E.Message) string {
		t.Helper()
		id, err := n.SendGroupMessage(from, group, msg, false)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	g := group.String()

	type step struct {
		name       string
		send       func() string // the revoke's or edit's id
		target     string
		chat       string
		status     string // of the messages.update
		sender     string // the acting sender
		storedText string // the target's text in the store afterwards
		storedStat string
	}
	steps := []step{
		{"B revokes A's direct message", func() string { return direct1(b, revokeOf(userJID(me), userJID(a), direct)) },
			direct, userJID(b), "revoke-refused", userJID(b), "von A, direkt", "received"},
		{"B edits A's direct message", func() string { return direct1(b, editOf(userJID(me), userJID(a), direct, "gefälscht")) },
			direct, userJID(b), "edit-refused", userJID(b), "von A, direkt", "received"},
		{"B revokes A's group message", func() string { return inGroup1(b, revokeOf(g, userJID(a), inGroup)) },
			inGroup, g, "revoke-refused", userJID(b), "von A, in der Gruppe", "received"},
		{"B edits A's group message", func() string { return inGroup1(b, editOf(g, userJID(a), inGroup, "gefälscht")) },
			inGroup, g, "edit-refused", userJID(b), "von A, in der Gruppe", "received"},
		{"A revokes its direct message from the group", func() string { return inGroup1(a, revokeOf(userJID(me), "", direct)) },
			direct, g, "revoke-refused", userJID(a), "von A, direkt", "received"},
		{"A edits its own direct message", func() string { return direct1(a, editOf(userJID(me), "", direct, "von A, korrigiert")) },
			direct, userJID(a), "edited", userJID(a), "von A, korrigiert", "received"}, // its sender's edit is applied
		{"A revokes its own direct message", func() string { return direct1(a, revokeOf(userJID(me), "", direct)) },
			direct, userJID(a), "revoked", userJID(a), "von A, korrigiert", "revoked"},
		{"A revokes the account's message in their chat", func() string { return direct1(a, revokeOf(userJID(me), "", mine)) },
			mine, userJID(a), "revoke-refused", userJID(a), "von mir", "sent"},
		{"A edits the account's message in their chat", func() string { return direct1(a, editOf(userJID(me), "", mine, "gefälscht")) },
			mine, userJID(a), "edit-refused", userJID(a), "von mir", "sent"},
		{"the account's phone revokes its message", func() string { return direct1(me, revokeOf(userJID(me), "", note)) },
			note, userJID(me), "revoked", userJID(me), "Notiz", "revoked"},
		{"the admin revokes A's group message", func() string { return inGroup1(host, revokeOf(g, userJID(a), inGroup)) },
			inGroup, g, "revoked", userJID(host), "von A, in der Gruppe", "revoked"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			by := st.send()
			d := waitUpdateBy(t, s, sess.ID, by)
			if d.ID != st.target || d.Chat != st.chat || d.Status != st.status || d.Sender == nil || *d.Sender != st.sender {
				t.Errorf("messages.update of %s: %+v (sender %v), want id %s chat %s status %s sender %s", by, d, str(d.Sender), st.target, st.chat, st.status, st.sender)
			}
			refused := st.status == "revoke-refused" || st.status == "edit-refused"
			if refused != (d.Error != nil) {
				t.Errorf("messages.update of %s: error %v", by, str(d.Error))
			}
			if st.status == "edit-refused" && d.Text != nil {
				t.Errorf("a refused edit carries the text %q", *d.Text)
			}
			m := storedMsgOf(t, s, sess.ID, st.target)
			if m.Status != st.storedStat || m.Text != st.storedText {
				t.Errorf("stored %s: %+v, want status %s text %q", st.target, m, st.storedStat, st.storedText)
			}
		})
	}
}

// updateByData is a messages.update's data.
type updateByData struct {
	ID, Chat, Status string
	MessageID        *string
	Sender           *string
	Error            *string
	Text             *string
}

// waitUpdateBy waits for the messages.update whose messageId is by.
func waitUpdateBy(t *testing.T, s *apptest.Server, sessionID, by string) updateByData {
	t.Helper()
	for range 300 {
		var p struct {
			Events struct{ Edges []struct{ Node gqlEvent } }
		}
		s.MustGraphQL(t, apptest.AdminToken, eventsQuery, map[string]any{"s": sessionID, "k": []string{"MESSAGES_UPDATE"}, "f": 500}, &p)
		for _, e := range p.Events.Edges {
			var d updateByData
			if err := json.Unmarshal(e.Node.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.MessageID != nil && *d.MessageID == by {
				return d
			}
		}
		sleep()
	}
	t.Fatalf("no messages.update with messageId %s", by)
	return updateByData{}
}

type storedMsg struct{ Status, Chat, Sender, Text string }

// storedMsgOf reads a message from the store.
func storedMsgOf(t *testing.T, s *apptest.Server, sessionID, id string) storedMsg {
	t.Helper()
	var out struct{ Message storedMsg }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status chat sender text } }`,
		map[string]any{"s": sessionID, "m": id}, &out)
	return out.Message
}

// waitInStore waits until the store holds message id.
func waitInStore(t *testing.T, s *apptest.Server, sessionID, id string) {
	t.Helper()
	for range 300 {
		res := s.GraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status } }`,
			map[string]any{"s": sessionID, "m": id})
		var out struct{ Message *struct{ Status string } }
		if len(res.Errors) == 0 && json.Unmarshal(res.Data, &out) == nil && out.Message != nil && out.Message.Status != "" {
			return
		}
		sleep()
	}
	t.Fatalf("message %s was never stored", id)
}
