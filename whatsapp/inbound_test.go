package whatsapp

import (
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// TestInbound: what contacts send to the linked account arrives as events,
// with the message record set on every message event.
func TestInbound(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	chat := phoneJID(peer).String()

	// upsert waits for the message event of id and checks its record
	// against its data.
	upsert := func(t *testing.T, kind, id string) Event {
		t.Helper()
		ev, _ := e.event("s1", kind, id)
		rec := ev.Message
		if rec == nil || rec.ID != id || rec.Chat != ev.Data["chat"] || rec.Sender != ev.Data["sender"] ||
			rec.Type != ev.Data["type"] || rec.FromMe != ev.Data["fromMe"] || ev.Data["timestamp"] != timestamp(rec.Timestamp) {
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
		var upd Event
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
