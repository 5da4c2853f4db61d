package whatsapp

// Messages and receipts that arrive on a session's client. Each handler
// returns false when its events could not be published: whatsmeow then
// does not acknowledge the stanza and WhatsApp sends it again.

import (
	"context"
	"strings"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// handleMessage publishes a message received from a contact
// (inbound-message.upsert) or sent by the account on another device
// (outbound-message.upsert), then what it does to another message:
// messages.reaction for a reaction, messages.update for a revoke or an
// edit. Stanzas that are no chat message (protocol and peer messages,
// status updates) publish nothing.
func (r *clientRun) handleMessage(evt *events.Message) bool {
	if evt.Message.GetSecretEncryptedMessage() != nil {
		var ok, stored bool
		if evt, ok, stored = r.openSecretEdit(evt); !ok {
			return stored
		}
	}
	if ok, handled := r.handleNonChat(evt); handled {
		return ok
	}
	info := &evt.Info
	if info.Category == "peer" || info.Chat == types.StatusBroadcastJID {
		return true
	}
	c := contentOfEvent(evt)
	if c.typ == "" {
		return true
	}
	if c.beyond != "" {
		r.s.log.Warn("a received poll is beyond WhatsApp's bounds: kept as a message of unknown type", "message_id", info.ID, "why", c.beyond)
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
	ts := payload.At(info.Timestamp)
	switch c.typ {
	case "reaction":
		key := payload.ReactionKey{
			ID: c.quotedID, RemoteJID: payload.Text(c.reactionKey.GetRemoteJID()),
			FromMe: c.reactionKey.GetFromMe(), Participant: payload.Text(c.reactionKey.GetParticipant()),
		}
		evs = append(evs, Event{Kind: KindMessagesReaction, Data: &payload.Reaction{
			ID: c.quotedID, Chat: rec.Chat, Sender: rec.Sender, SenderPhone: data.SenderPhone,
			SenderLID: data.SenderLID, FromMe: info.IsFromMe, Timestamp: ts, MessageID: info.ID,
			// An empty text is a reaction taken back.
			Reaction: payload.ReactionBody{Text: c.text, Key: key},
		}})
	case "revoke", "edit":
		evs = append(evs, r.protocolUpdate(ctx, evt, rec, sender, c))
	}
	for i := range evs {
		evs[i].Key = stanzaKey(evs[i].Kind, info.Chat.String(), info.Sender.String(), info.ID)
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}

// stanzaKey is an Event.Key: the kind and what names the stanza.
func stanzaKey(kind string, parts ...string) string {
	return kind + "/" + strings.Join(parts, "/")
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
	ts := payload.At(evt.Timestamp)
	evs := make([]Event, 0, len(evt.MessageIDs))
	if evt.IsGroup {
		p := senderOf(ctx, r.cli, &evt.MessageSource)
		for _, id := range evt.MessageIDs {
			d := &payload.Receipt{ID: id, Chat: chat, Status: status, Timestamp: ts, Participant: p.jid().String()}
			d.ParticipantPhone = p.phoneText()
			d.ParticipantLID = p.lidText()
			evs = append(evs, Event{Kind: KindMessageReceipt, Data: d, Key: stanzaKey(KindMessageReceipt, chat, id, status, d.Participant)})
		}
	} else {
		for _, id := range evt.MessageIDs {
			evs = append(evs, Event{Kind: KindMessagesUpdate, Data: &payload.MessageStatus{ID: id, Chat: chat, Status: status, Timestamp: ts},
				Key: stanzaKey(KindMessagesUpdate, chat, id, status)})
		}
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}
