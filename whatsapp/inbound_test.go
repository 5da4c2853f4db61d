package whatsapp

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// TestInbound: what contacts send to the linked account arrives as events,
// with the message record set on every message event.
func TestInbound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	chat := phoneJID(peer).String()

	// upsert waits for the message event of id and checks its record
	// against its data.
	upsert := func(t *testing.T, kind, id string) published {
		t.Helper()
		ev, _ := e.event("s1", kind, id)
		rec := ev.Message
		if rec == nil || rec.ID != id || rec.Chat != ev.Data["chat"] || rec.Sender != ev.Data["sender"] ||
			rec.Type != ev.Data["type"] || rec.FromMe != ev.Data["fromMe"] || ev.Data["timestamp"] != Timestamp(rec.Timestamp) {
			t.Errorf("record %+v of data %v", rec, ev.Data)
		}
		return ev
	}
	contact := map[string]any{
		"chat": chat, "sender": chat, "senderPhone": peer, "fromMe": false, "isGroup": false, "pushName": "Contact " + peer,
	}

	var textID string
	t.Run("text", func(t *testing.T) {
		id, err := e.net.SendText(peer, phone, "hello there")
		if err != nil {
			t.Fatal(err)
		}
		textID = id
		ev := upsert(t, KindInboundMessage, id)
		wantData(t, "inbound-message.upsert", ev.Data, contact)
		wantData(t, "inbound-message.upsert", ev.Data, map[string]any{"type": "text", "text": "hello there", "caption": nil, "size": nil})
		if ev.Message.Text != "hello there" {
			t.Errorf("record text %q", ev.Message.Text)
		}
		if ts, err := time.Parse(time.RFC3339, ev.Data["timestamp"].(string)); err != nil || time.Since(ts) > time.Minute {
			t.Errorf("timestamp %v: %v", ev.Data["timestamp"], err)
		}
	})

	t.Run("image", func(t *testing.T) {
		pic := tinyPNG(t)
		id, err := e.net.SendImage(peer, phone, pic, "image/png", "look")
		if err != nil {
			t.Fatal(err)
		}
		ev := upsert(t, KindInboundMessage, id)
		wantData(t, "inbound-message.upsert", ev.Data, contact)
		wantData(t, "inbound-message.upsert", ev.Data, map[string]any{
			"type": "image", "caption": "look", "mimetype": "image/png", "size": uint64(len(pic)), "text": nil,
		})
		if ev.Message.Caption != "look" {
			t.Errorf("record caption %q", ev.Message.Caption)
		}
	})

	t.Run("edit", func(t *testing.T) {
		id, err := e.net.SendMessage(peer, phone, &waE2E.Message{EditedMessage: &waE2E.FutureProofMessage{Message: &waE2E.Message{
			ProtocolMessage: &waE2E.ProtocolMessage{
				Type:          waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(),
				Key:           &waCommon.MessageKey{RemoteJID: proto.String(phoneJID(phone).String()), FromMe: proto.Bool(true), ID: proto.String(textID)},
				EditedMessage: &waE2E.Message{Conversation: proto.String("hello again")},
			},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		ev := upsert(t, KindInboundMessage, id)
		wantData(t, "inbound-message.upsert", ev.Data, map[string]any{"type": "edit", "text": "hello again", "quotedId": textID})
		upd, _ := e.event("s1", KindMessagesUpdate, textID)
		wantData(t, "messages.update", upd.Data, map[string]any{"chat": chat, "status": "edited", "text": "hello again", "messageId": id})
	})

	t.Run("revoke", func(t *testing.T) {
		id, err := e.net.SendMessage(peer, phone, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_REVOKE.Enum(),
			Key:  &waCommon.MessageKey{RemoteJID: proto.String(phoneJID(phone).String()), FromMe: proto.Bool(true), ID: proto.String(textID)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ev := upsert(t, KindInboundMessage, id)
		wantData(t, "inbound-message.upsert", ev.Data, map[string]any{"type": "revoke", "quotedId": textID})
		var upd published
		e.waitUntil("messages.update revoked", func() bool {
			for _, x := range e.pub.events("s1") {
				if x.Kind == KindMessagesUpdate && x.Data["status"] == "revoked" {
					upd = x
					return true
				}
			}
			return false
		})
		wantData(t, "messages.update", upd.Data, map[string]any{"id": textID, "chat": chat, "messageId": id})
		if upd.Message != nil {
			t.Error("messages.update carries a message record")
		}
	})

	// Messages the account sent, for the contact's reaction and receipts.
	var sent []string
	for _, text := range []string{"one", "two"} {
		s, err := m.Send(ctx, "s1", Outgoing{To: phoneJID(peer), Type: "text", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, s.ID)
	}

	t.Run("reaction", func(t *testing.T) {
		id, err := e.net.SendReaction(peer, phone, sent[0], "👍")
		if err != nil {
			t.Fatal(err)
		}
		ev := upsert(t, KindInboundMessage, id)
		wantData(t, "inbound-message.upsert", ev.Data, map[string]any{"type": "reaction", "text": "👍", "quotedId": sent[0]})
		re, _ := e.event("s1", KindMessagesReaction, sent[0])
		wantData(t, "messages.reaction", re.Data, map[string]any{"chat": chat, "sender": chat, "senderPhone": peer, "fromMe": false, "messageId": id})
		r, _ := re.Data["reaction"].(map[string]any)
		key, _ := r["key"].(map[string]any)
		if r["text"] != "👍" || key["id"] != sent[0] {
			t.Errorf("reaction %v", re.Data["reaction"])
		}
	})

	t.Run("receipts", func(t *testing.T) {
		for _, status := range []string{"delivered", "read"} {
			if err := e.net.SendReceipt(peer, phoneJID(phone), sent, status); err != nil {
				t.Fatal(err)
			}
			for _, id := range sent {
				e.waitUntil(status+" of "+id, func() bool {
					for _, x := range e.pub.events("s1") {
						if x.Kind == KindMessagesUpdate && x.Data["id"] == id && x.Data["status"] == status {
							wantData(t, "messages.update", x.Data, map[string]any{"chat": chat})
							return true
						}
					}
					return false
				})
			}
		}
	})

	t.Run("from the phone", func(t *testing.T) {
		// The account's phone writes to itself: a message of the account
		// from another device.
		id, err := e.net.SendText(phone, phone, "note to self")
		if err != nil {
			t.Fatal(err)
		}
		ev := upsert(t, KindOutboundMessage, id)
		self := phoneJID(phone).String()
		wantData(t, "outbound-message.upsert", ev.Data, map[string]any{
			"chat": self, "sender": self, "senderPhone": phone, "senderLid": parseJID(t, st.LID).ToNonAD().String(),
			"fromMe": true, "type": "text", "text": "note to self",
		})
	})
	e.settle(st)
}

// TestContentOf: the type and fields of each kind of message content, and
// the stanzas that are no chat message at all (type "").
func TestContentOf(t *testing.T) {
	t.Parallel()
	loc := func(lat, lng float64) (*float64, *float64) { return &lat, &lng }
	lat, lng := loc(1.5, -2.25)
	tests := []struct {
		name string
		msg  *waE2E.Message
		want content
	}{
		{"sticker", &waE2E.Message{StickerMessage: &waE2E.StickerMessage{Mimetype: proto.String("image/webp"), FileLength: proto.Uint64(42)}},
			content{typ: "sticker", mimetype: "image/webp", size: 42, hasMedia: true}},
		{"video note", &waE2E.Message{PtvMessage: &waE2E.VideoMessage{Mimetype: proto.String("video/mp4")}},
			content{typ: "video", mimetype: "video/mp4", hasMedia: true}},
		{"live location", &waE2E.Message{LiveLocationMessage: &waE2E.LiveLocationMessage{DegreesLatitude: proto.Float64(1.5), DegreesLongitude: proto.Float64(-2.25), Caption: proto.String("on my way")}},
			content{typ: "location", lat: lat, lng: lng, caption: "on my way"}},
		{"several contacts", &waE2E.Message{ContactsArrayMessage: &waE2E.ContactsArrayMessage{DisplayName: proto.String("2 contacts"),
			Contacts: []*waE2E.ContactMessage{{Vcard: proto.String("A")}, {Vcard: proto.String("B")}}}},
			content{typ: "contact", name: "2 contacts", vcard: "A\nB"}},
		{"poll", &waE2E.Message{PollCreationMessageV3: &waE2E.PollCreationMessage{Name: proto.String("Lunch?"),
			Options: []*waE2E.PollCreationMessage_Option{{OptionName: proto.String("pizza")}, {OptionName: proto.String("sushi")}}}},
			content{typ: "poll", text: "Lunch?"}},
		{"reply", &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("yes"),
			ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String("Q1"), MentionedJID: []string{"1@s.whatsapp.net"}}}},
			content{typ: "text", text: "yes", quotedID: "Q1", mentions: []string{"1@s.whatsapp.net"}}},
		{"something new", &waE2E.Message{ButtonsMessage: &waE2E.ButtonsMessage{}}, content{typ: "unknown"}},
		{"sender key only", &waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{}}, content{}},
		{"context info only", &waE2E.Message{MessageContextInfo: &waE2E.MessageContextInfo{}}, content{}},
		{"app state keys", &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_APP_STATE_SYNC_KEY_SHARE.Enum()}}, content{}},
		{"poll vote", &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{}}, content{}},
		{"nil", nil, content{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := contentOf(tt.msg)
			same := got.typ == tt.want.typ && got.text == tt.want.text && got.caption == tt.want.caption &&
				got.mimetype == tt.want.mimetype && got.size == tt.want.size && got.hasMedia == tt.want.hasMedia &&
				got.name == tt.want.name && got.vcard == tt.want.vcard && got.quotedID == tt.want.quotedID &&
				slices.Equal(got.mentions, tt.want.mentions) && (got.lat == nil) == (tt.want.lat == nil)
			if same && got.lat != nil {
				same = *got.lat == *tt.want.lat && *got.lng == *tt.want.lng
			}
			if !same {
				t.Errorf("contentOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestGroupReceipts: a member's receipt in a group is one
// message-receipt.update per message, naming the member; receipts of the
// account's own devices and retries publish nothing. (The network's phones
// send receipts in direct chats only, so the receipt is handed to the
// session's running client as whatsmeow parses it.)
func TestGroupReceipts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	g, err := m.CreateGroup(ctx, "s1", "Receipts", "", []types.JID{phoneJID(peer)})
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	s := m.sessions["s1"]
	m.mu.Unlock()
	s.mu.Lock()
	run := &clientRun{m: m, s: s, cli: s.cli}
	s.mu.Unlock()

	member := types.JID{User: peer, Device: 3, Server: types.DefaultUserServer}
	now := time.Now()
	receipt := func(typ types.ReceiptType, fromMe bool, ids ...string) *events.Receipt {
		return &events.Receipt{
			MessageSource: types.MessageSource{Chat: g.JID, Sender: member, IsGroup: true, IsFromMe: fromMe},
			MessageIDs:    ids, Timestamp: now, Type: typ,
		}
	}
	n := len(e.pub.events("s1"))
	for _, ev := range []*events.Receipt{
		receipt(types.ReceiptTypeRetry, false, "X"), receipt(types.ReceiptTypeSender, true, "X"),
		receipt(types.ReceiptTypeRead, true, "X"), receipt(types.ReceiptTypeReadSelf, true, "X"),
	} {
		if !run.handleEvent(ev) {
			t.Errorf("receipt %s not acknowledged", ev.Type)
		}
	}
	if !run.handleEvent(receipt(types.ReceiptTypeRead, false, "A", "B")) {
		t.Fatal("receipt not acknowledged")
	}
	// The group's own events (groups.upsert, chats.upsert of the group
	// the account created) may arrive meanwhile: only receipts count here.
	var evs []published
	for _, ev := range e.pub.events("s1")[n:] {
		if ev.Kind != KindGroupsUpsert && ev.Kind != KindChatsUpsert {
			evs = append(evs, ev)
		}
	}
	if len(evs) != 2 {
		t.Fatalf("published %+v, want 2 receipt events", evs)
	}
	for i, id := range []string{"A", "B"} {
		if evs[i].Kind != KindMessageReceipt {
			t.Errorf("kind %s", evs[i].Kind)
		}
		wantData(t, "message-receipt.update", evs[i].Data, map[string]any{
			"id": id, "chat": g.JID.String(), "status": "read", "timestamp": Timestamp(now),
			"participant": phoneJID(peer).String(), "participantPhone": peer,
		})
	}
}

// refusingPublisher refuses message events while refuse is set, and counts
// what it refused.
type refusingPublisher struct {
	*recorder
	refuse  atomic.Bool
	refused atomic.Int32
}

func (p *refusingPublisher) Publish(ctx context.Context, id string, ev Event) error {
	if ev.Message != nil && p.refuse.Load() {
		p.refused.Add(1)
		return errors.New("message store unavailable")
	}
	return p.recorder.Publish(ctx, id, ev)
}

// TestInboundNotStored: a message whose event could not be stored is not
// acknowledged; WhatsApp sends it again after a reconnect and it is
// published then. The re-sent ciphertext can only be read again from
// whatsmeow's decrypted-event buffer (the Signal ratchet has moved on: it
// fails with "old counter" and whatsmeow drops it), so the manager's
// clients need EnableDecryptedEventBuffer.
func TestInboundNotStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &refusingPublisher{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", phone)
	dev := parseJID(t, st.JID)

	pub.refuse.Store(true)
	id, err := e.net.SendText(peer, phone, "keep me")
	if err != nil {
		t.Fatal(err)
	}
	e.waitUntil("the message event refused", func() bool { return pub.refused.Load() > 0 })
	if n := e.net.Unacked(dev); n != 1 {
		t.Fatalf("%d stanzas unacknowledged after the event was refused, want 1", n)
	}
	for _, ev := range e.pub.events("s1") {
		if ev.Kind == KindInboundMessage {
			t.Fatalf("a refused event was published: %+v", ev)
		}
	}

	pub.refuse.Store(false)
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusConnected)
	ev, _ := e.event("s1", KindInboundMessage, id)
	if ev.Message == nil || ev.Message.Text != "keep me" {
		t.Errorf("after the reconnect: %+v", ev)
	}
	e.settle(st)
}
