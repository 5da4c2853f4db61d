package whatsapp

// Messages and receipts that arrive on a session's client. Each handler
// returns false when its events could not be published: whatsmeow then
// does not acknowledge the stanza and WhatsApp sends it again.

import (
	"context"
	"maps"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// handleMessage publishes a message received from a contact
// (inbound-message.upsert) or sent by the account on another device
// (outbound-message.upsert), then what it does to another message:
// messages.reaction for a reaction, messages.update for a revoke or an
// edit. Stanzas that are no chat message (protocol and peer messages,
// status updates) publish nothing.
func (r *clientRun) handleMessage(evt *events.Message) bool {
	info := &evt.Info
	if info.Category == "peer" || info.Chat == types.StatusBroadcastJID {
		return true
	}
	c := contentOf(evt.Message)
	if c.typ == "" {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	chat, sender := chatOf(ctx, r.cli, &info.MessageSource), senderOf(ctx, r.cli, &info.MessageSource)
	rec, data := describe(info, chat, sender, c)
	kind := KindInboundMessage
	if info.IsFromMe {
		kind = KindOutboundMessage
	}
	evs := []Event{{Kind: kind, Data: data, Message: rec}}
	ts := Timestamp(info.Timestamp)
	switch c.typ {
	case "reaction":
		key := map[string]any{"id": c.quotedID, "remoteJid": optional(c.reactionKey.GetRemoteJID()), "fromMe": c.reactionKey.GetFromMe()}
		if p := c.reactionKey.GetParticipant(); p != "" {
			key["participant"] = p
		}
		evs = append(evs, Event{Kind: KindMessagesReaction, Data: map[string]any{
			"id": c.quotedID, "chat": rec.Chat, "sender": rec.Sender, "senderPhone": data["senderPhone"],
			"senderLid": data["senderLid"], "fromMe": info.IsFromMe, "timestamp": ts, "messageId": info.ID,
			// An empty text is a reaction taken back.
			"reaction": map[string]any{"text": c.text, "key": key},
		}})
	case "revoke":
		evs = append(evs, Event{Kind: KindMessagesUpdate, Data: map[string]any{
			"id": c.quotedID, "chat": rec.Chat, "status": "revoked", "timestamp": ts, "messageId": info.ID,
		}})
	case "edit":
		evs = append(evs, Event{Kind: KindMessagesUpdate, Data: map[string]any{
			"id": c.quotedID, "chat": rec.Chat, "status": "edited", "timestamp": ts, "messageId": info.ID,
			"text": optional(c.text), "caption": optional(c.caption),
		}})
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}

// receiptStatus is the messages.update status of a receipt type; "" for
// the receipts that say nothing about a contact reaching a message (the
// account's own devices, retries, errors).
func receiptStatus(t types.ReceiptType) string {
	switch t {
	case types.ReceiptTypeDelivered, types.ReceiptTypeInactive:
		return "delivered"
	case types.ReceiptTypeRead:
		return "read"
	case types.ReceiptTypePlayed:
		return "played"
	}
	return ""
}

// handleReceipt publishes what a contact's receipt says about the
// account's messages, one event per message: messages.update in a direct
// chat, message-receipt.update (naming the participant) in a group.
// Receipts of the account's own devices are left out.
func (r *clientRun) handleReceipt(evt *events.Receipt) bool {
	status := receiptStatus(evt.Type)
	if status == "" || evt.IsFromMe || len(evt.MessageIDs) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	chat := chatOf(ctx, r.cli, &evt.MessageSource).String()
	ts := Timestamp(evt.Timestamp)
	kind, participant := KindMessagesUpdate, map[string]any{}
	if evt.IsGroup {
		kind = KindMessageReceipt
		p := senderOf(ctx, r.cli, &evt.MessageSource)
		participant["participant"], participant["participantPhone"], participant["participantLid"] = p.jid().String(), nil, nil
		if !p.pn.IsEmpty() {
			participant["participantPhone"] = p.pn.User
		}
		if !p.lid.IsEmpty() {
			participant["participantLid"] = p.lid.String()
		}
	}
	evs := make([]Event, 0, len(evt.MessageIDs))
	for _, id := range evt.MessageIDs {
		d := map[string]any{"id": id, "chat": chat, "status": status, "timestamp": ts}
		maps.Copy(d, participant)
		evs = append(evs, Event{Kind: kind, Data: d})
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}
