package whatsapp

import (
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"
	"testing"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestSenderAddresses: a sender's number and LID are both given whichever
// way WhatsApp addressed the message: by number with the LID alongside, by
// LID with the number alongside, in direct chats and in groups of either
// addressing mode.
func TestSenderAddresses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	g, err := m.CreateGroup(ctx, "s1", "Addresses", "", []types.JID{phoneJID(peer)})
	if err != nil {
		t.Fatal(err)
	}
	sender := map[string]any{"sender": phoneJID(peer).String(), "senderPhone": peer, "senderLid": e.lidOf(peer), "fromMe": false}
	text := func(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }
	tests := []struct {
		name string
		send func() (string, error)
		chat string
	}{
		{"direct by number", func() (string, error) { return e.net.SendMessage(peer, phone, text("by number")) }, phoneJID(peer).String()},
		{"direct by LID", func() (string, error) { return e.net.SendMessageByLID(peer, phone, text("by LID")) }, phoneJID(peer).String()},
		{"group by number", func() (string, error) { return e.net.SendGroupMessage(peer, g.JID, text("group by number"), false) }, g.JID.String()},
		{"group by LID", func() (string, error) { return e.net.SendGroupMessage(peer, g.JID, text("group by LID"), true) }, g.JID.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := tt.send()
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := e.event("s1", KindInboundMessage, id)
			wantData(t, tt.name, ev.Data, sender)
			wantData(t, tt.name, ev.Data, map[string]any{"chat": tt.chat, "isGroup": tt.chat == g.JID.String(), "type": "text"})
			if ev.Message == nil || ev.Message.Chat != tt.chat || ev.Message.Sender != phoneJID(peer).String() {
				t.Errorf("record %+v", ev.Message)
			}
		})
	}
	e.settle(st)
}

// TestPhoneNumberShare: a contact writing under its LID shares its number:
// chats.phoneNumberShare with both, and no message event.
func TestPhoneNumberShare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	id, err := e.net.SendMessageByLID(peer, phone, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_SHARE_PHONE_NUMBER.Enum(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ev := e.eventWhere("s1", KindPhoneNumberShare, func(map[string]any) bool { return true })
	wantData(t, "chats.phoneNumberShare", ev.Data, map[string]any{"chat": phoneJID(peer).String(), "lid": e.lidOf(peer), "phone": peer})
	if ts, _ := ev.Data["timestamp"].(string); ts == "" {
		t.Errorf("no timestamp: %v", ev.Data)
	}
	e.settle(st)
	for _, x := range e.pub.events("s1") {
		if x.Message != nil && x.Message.ID == id {
			t.Errorf("the share was published as a message: %+v", x)
		}
	}
}

// TestPollVotes: a contact's poll comes with its options; its votes are
// messages.update of the poll, status voted, decrypted with the poll's
// secret: the chosen options by name and hash. A vote taken back selects
// nothing; a vote in a poll the device never had says so in error; after
// a restart the hashes still come, the names no longer.
func TestPollVotes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	chat := phoneJID(peer).String()
	pollID, err := e.net.SendPoll(peer, phone, "Lunch?", []string{"pizza", "sushi"})
	if err != nil {
		t.Fatal(err)
	}
	poll, _ := e.event("s1", KindInboundMessage, pollID)
	wantData(t, "poll", poll.Data, map[string]any{"type": "poll", "text": "Lunch?", "pollOptions": []string{"pizza", "sushi"}})

	voter := map[string]any{"voter": chat, "voterPhone": peer, "voterLid": e.lidOf(peer)}
	vote := func(t *testing.T, options []string) map[string]any {
		t.Helper()
		voteID, err := e.net.VotePoll(pollID, phone, options)
		if err != nil {
			t.Fatal(err)
		}
		ev := e.eventWhere("s1", KindMessagesUpdate, func(d map[string]any) bool { return d["messageId"] == voteID })
		wantData(t, "messages.update", ev.Data, map[string]any{"id": pollID, "chat": chat, "status": "voted", "error": nil})
		pv, _ := ev.Data["vote"].(map[string]any)
		wantData(t, "vote", pv, voter)
		for _, x := range e.pub.events("s1") {
			if x.Message != nil && x.Message.ID == voteID {
				t.Errorf("the vote was published as a message: %+v", x)
			}
		}
		return pv
	}
	t.Run("vote", func(t *testing.T) {
		pv := vote(t, []string{"sushi"})
		wantData(t, "vote", pv, map[string]any{"selectedOptions": []string{"sushi"}, "selectedHashes": []string{sha256Hex("sushi")}})
	})
	t.Run("taken back", func(t *testing.T) {
		pv := vote(t, nil)
		wantData(t, "vote", pv, map[string]any{"selectedOptions": []string{}, "selectedHashes": []string{}})
	})
	t.Run("unknown poll", func(t *testing.T) {
		voteID, err := e.net.SendMessage(peer, phone, &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{
			PollCreationMessageKey: &waCommon.MessageKey{RemoteJID: proto.String(phoneJID(phone).String()), FromMe: proto.Bool(true), ID: proto.String("3EB0NEVERSEEN")},
			Vote:                   &waE2E.PollEncValue{EncPayload: make([]byte, 32), EncIV: make([]byte, 12)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ev := e.eventWhere("s1", KindMessagesUpdate, func(d map[string]any) bool { return d["messageId"] == voteID })
		wantData(t, "messages.update", ev.Data, map[string]any{"id": "3EB0NEVERSEEN", "status": "voted"})
		if ev.Data["error"] == nil {
			t.Errorf("an undecryptable vote without error: %v", ev.Data)
		}
		pv, _ := ev.Data["vote"].(map[string]any)
		wantData(t, "vote", pv, map[string]any{"voter": chat, "selectedOptions": nil, "selectedHashes": nil})
	})
	t.Run("after a restart", func(t *testing.T) {
		e.settle(st)
		m.Close()
		m2 := e.manager()
		if err := m2.Connect(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		e.waitStatus(m2, "s1", StatusConnected)
		pv := vote(t, []string{"pizza"})
		wantData(t, "vote", pv, map[string]any{"selectedOptions": nil, "selectedHashes": []string{sha256Hex("pizza")}})
	})
	e.settle(st)
}

// TestUndecryptable: a message the device cannot decrypt is a
// messages.update "failed" naming its sender, and no message event.
func TestUndecryptable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	obs := &countingObserver{}
	m.obs = obs
	st := e.pairQR(m, "s1", phone)
	id, err := e.net.SendUndecryptable(peer, phone)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := e.event("s1", KindMessagesUpdate, id)
	wantData(t, "messages.update", ev.Data, map[string]any{"chat": phoneJID(peer).String(), "status": "failed", "sender": phoneJID(peer).String()})
	if msg, _ := ev.Data["error"].(string); msg == "" {
		t.Errorf("no error: %v", ev.Data)
	}
	e.settle(st)
	for _, x := range e.pub.events("s1") {
		if x.Kind == KindInboundMessage && x.Data["id"] == id {
			t.Errorf("an undecryptable message was published as a message: %+v", x)
		}
	}
	if n := obs.undecryptable.Load(); n != 1 {
		t.Errorf("the observer counted %d undecryptable messages, want 1 (/metrics)", n)
	}
}

// countingObserver counts what the manager reports (the /metrics side).
type countingObserver struct {
	storeFailed, undecryptable atomic.Int32
}

func (o *countingObserver) StoreFailed()   { o.storeFailed.Add(1) }
func (o *countingObserver) Undecryptable() { o.undecryptable.Add(1) }
