package whatsapp

// Presence: contacts coming online and going offline, and typing or
// recording in a chat, become presence.update events. WhatsApp sends a
// contact's availability only to devices that subscribed to it on their
// current connection (SubscribePresence); chat states come regardless.

import (
	"context"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// KindPresenceUpdate is a contact's availability or chat state:
// {chat, participant, presence, lastSeen?, media?}.
const KindPresenceUpdate = "presence.update"

// SubscribePresence asks WhatsApp for the availability of the user jid:
// presence.update events follow each time it comes online or goes offline.
// The subscription lasts as long as the session's current connection (a
// reconnect ends it, as in WhatsApp's own clients).
func (m *Manager) SubscribePresence(ctx context.Context, sessionID string, jid types.JID) error {
	cli, err := m.client(sessionID)
	if err != nil {
		return err
	}
	if err := cli.SubscribePresence(ctx, jid.ToNonAD()); err != nil {
		return classify(sessionID, "subscribe to a presence", err)
	}
	return nil
}

// handlePresence publishes a contact's availability. Presence stanzas are
// not acknowledged at all; one that could not be stored is lost (the next
// change brings the state again).
func (r *clientRun) handlePresence(evt *events.Presence) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p := personOf(ctx, r.cli, evt.From)
	d := &payload.Presence{Presence: "available"}
	fillParticipant(d, p, evt.From)
	d.Chat = d.Participant
	if evt.Unavailable {
		d.Presence = "unavailable"
		if !evt.LastSeen.IsZero() {
			d.LastSeen = payload.At(evt.LastSeen)
		}
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindPresenceUpdate, Data: d}) == nil
}

// handleChatPresence publishes a contact typing, recording a voice note or
// pausing in a chat.
func (r *clientRun) handleChatPresence(evt *events.ChatPresence) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	d := &payload.Presence{Chat: chatOf(ctx, r.cli, &evt.MessageSource).String(), Presence: string(evt.State), Media: payload.Text(evt.Media)}
	fillParticipant(d, senderOf(ctx, r.cli, &evt.MessageSource), evt.Sender)
	if evt.State == types.ChatPresenceComposing && evt.Media == types.ChatPresenceMediaAudio {
		d.Presence = "recording"
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindPresenceUpdate, Data: d}) == nil
}

// fillParticipant names who a presence is of: p, or the address WhatsApp
// gave when p is unknown.
func fillParticipant(d *payload.Presence, p person, addr types.JID) {
	d.Participant = p.jid().String()
	if p.jid().IsEmpty() {
		d.Participant = addr.ToNonAD().String()
	}
	d.ParticipantPhone = p.phoneText()
	d.ParticipantLID = p.lidText()
}
