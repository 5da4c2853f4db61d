package whatsapp

// Messages that are no chat message of their own but carry an event: a
// contact sharing its phone number, poll votes, history sync
// notifications; and the messages that could not be decrypted.

import (
	"context"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// KindPhoneNumberShare is a contact writing under its LID sharing its phone
// number: {chat, lid, phone, timestamp}.
const KindPhoneNumberShare = "chats.phoneNumberShare"

// handleNonChat handles the messages handleMessage does not turn into a
// message event; handled is false for the others. It also keeps the
// options of the polls that pass, to name the options of later votes.
func (r *clientRun) handleNonChat(evt *events.Message) (ok, handled bool) {
	msg := evt.Message
	if p := pollOf(msg); p != nil {
		r.s.polls.remember(evt.Info.ID, optionNames(p))
	}
	switch {
	case msg.GetProtocolMessage().GetHistorySyncNotification() != nil:
		return r.handleHistoryNotification(evt), true
	case msg.GetProtocolMessage().GetType() == waE2E.ProtocolMessage_SHARE_PHONE_NUMBER:
		return r.handlePhoneNumberShare(evt), true
	case msg.GetPollUpdateMessage() != nil:
		return r.handlePollVote(evt), true
	}
	return true, false
}

// handlePhoneNumberShare publishes a contact's phone number share. WhatsApp
// gives the number with the stanza (sender_pn), and whatsmeow stores the
// LID's number before dispatching; the account's own shares tell nothing.
func (r *clientRun) handlePhoneNumberShare(evt *events.Message) bool {
	info := &evt.Info
	if info.IsFromMe || info.IsGroup {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p := senderOf(ctx, r.cli, &info.MessageSource)
	if p.lid.IsEmpty() {
		return true // a share from a contact known by number only: nothing to map
	}
	d := &payload.PhoneNumberShare{Chat: chatOf(ctx, r.cli, &info.MessageSource).String(), LID: p.lid.String(), Timestamp: payload.At(info.Timestamp)}
	if !p.pn.IsEmpty() {
		d.Phone = payload.Text(p.pn.User)
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindPhoneNumberShare, Data: d,
		Key: stanzaKey(KindPhoneNumberShare, info.Chat.String(), info.Sender.String(), info.ID)}) == nil
}

// handleUndecryptable publishes messages.update with status "failed" for a
// message this device could not read: the sender's id of it, so that a
// receiver knows a message arrived that it cannot see. whatsmeow has
// already asked the sender to send it again (a retry receipt): when the
// new copy decrypts, the message comes as inbound-message.upsert with the
// same id. Messages WhatsApp marks as not to be shown are left out.
// whatsmeow acknowledges the stanza before this runs, whatever it returns.
func (r *clientRun) handleUndecryptable(evt *events.UndecryptableMessage) bool {
	info := &evt.Info
	if evt.DecryptFailMode == events.DecryptFailHide || info.Category == "peer" || info.Chat == types.StatusBroadcastJID {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	reason := "the message could not be decrypted; the sender was asked to send it again"
	switch {
	case evt.UnavailableType == events.UnavailableTypeViewOnce:
		reason = "a view-once message: WhatsApp shows it on the phone only"
	case evt.IsUnavailable:
		reason = "WhatsApp sent this device no copy of the message; the phone was asked for one"
	}
	d := &payload.MessageStatus{
		ID: info.ID, Chat: chatOf(ctx, r.cli, &info.MessageSource).String(), Status: "failed",
		Error: payload.Text(reason), Timestamp: payload.At(info.Timestamp),
		Sender: payload.Text(senderOf(ctx, r.cli, &info.MessageSource).jid().String()),
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindMessagesUpdate, Data: d}) == nil
}
