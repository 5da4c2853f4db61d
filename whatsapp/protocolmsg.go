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
		if options, beyond := boundedPoll(p); beyond == "" {
			r.s.polls.remember(evt.Info.ID, options)
		}
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
	d.Phone = p.phoneText()
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
	r.m.obs.Undecryptable()
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

// protocolUpdate is the messages.update of a revoke or an edit: status
// revoked or edited, naming who sent it (sender). Whether it may act on
// the message is the message store's call, which knows the message's
// chat and sender (messaging.Service.Record turns a forged one into
// revoke-refused or edit-refused). What only the session knows is set
// here: that the account sent it, and, for a revoke in a group of another
// member's message, whether its sender is an admin.
func (r *clientRun) protocolUpdate(ctx context.Context, evt *events.Message, rec *Message, sender person, c content) Event {
	info := &evt.Info
	d := &payload.MessageStatus{
		ID: c.quotedID, Chat: rec.Chat, Status: "edited", Timestamp: payload.At(info.Timestamp), MessageID: payload.Text(info.ID),
		Sender: payload.Text(rec.Sender), ByMe: info.IsFromMe,
	}
	if c.typ == "revoke" {
		d.Status = "revoked"
		d.ByAdmin = info.IsGroup && r.revokesOthers(ctx, evt, sender) && r.isGroupAdmin(ctx, info.Chat, sender)
	} else {
		d.Text, d.Caption = payload.Text(c.text), payload.Text(c.caption)
	}
	return Event{Kind: KindMessagesUpdate, Data: d}
}

// revokesOthers is whether a group revoke names a message of another
// member than its sender (the key's participant): only then does the
// sender's role matter, and only then is the group's info fetched.
func (r *clientRun) revokesOthers(ctx context.Context, evt *events.Message, sender person) bool {
	key := evt.Message.GetProtocolMessage().GetKey()
	if key.GetFromMe() && evt.Info.IsFromMe {
		return false
	}
	p, err := types.ParseJID(key.GetParticipant())
	if err != nil || p.IsEmpty() {
		return true
	}
	named := personOf(ctx, r.cli, p)
	return !samePerson(named, sender)
}

// isGroupAdmin asks WhatsApp for the group's members (whatsmeow keeps no
// roles it could answer from): a revoke of another member's message is
// rare, and one that cannot be checked is refused, not applied.
func (r *clientRun) isGroupAdmin(ctx context.Context, group types.JID, who person) bool {
	g, err := r.cli.GetGroupInfo(ctx, group)
	if err != nil {
		r.s.log.Warn("the group's admins could not be read to judge a revoke; it is refused", "group", group.String(), "err", err)
		return false
	}
	for _, p := range g.Participants {
		if !p.IsAdmin && !p.IsSuperAdmin {
			continue
		}
		if samePerson(personOf(ctx, r.cli, p.JID, p.PhoneNumber, p.LID), who) {
			return true
		}
	}
	return false
}
