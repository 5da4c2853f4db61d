package whatsapp

// Reactions and edits of messages the session sends: each is a message of
// its own that names the one it acts on; the events say what changed.

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// Reaction is an emoji on message MessageID of Chat, which Sender sent
// (empty: the account itself); an empty Emoji takes the reaction back. ID
// is the reaction's own message id, reserved for an idempotency key; ""
// makes a new one.
type Reaction struct {
	Chat, Sender types.JID
	MessageID    string
	Emoji        string
	ID           string `json:",omitempty"`
}

// React sends the reaction, then publishes it as the account's
// outbound-message.upsert and messages.reaction (fromMe).
func (m *Manager) React(ctx context.Context, sessionID string, r Reaction) (Sent, error) {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return Sent{}, err
	}
	msg := cli.BuildReaction(r.Chat, r.Sender, r.MessageID, r.Emoji)
	resp, err := cli.SendMessage(ctx, r.Chat, msg, whatsmeow.SendRequestExtra{ID: r.ID})
	if err != nil {
		return Sent{}, sendFault(s.id, r.Chat, "send the reaction", err)
	}
	sent := Sent{ID: resp.ID, Chat: r.Chat, Timestamp: resp.Timestamp}
	out := m.ownMessage(s, cli, sent, msg)
	d, _ := out.Data.(*payload.Message)
	key := msg.GetReactionMessage().GetKey()
	reaction := &payload.Reaction{
		ID: r.MessageID, Chat: out.Message.Chat, Sender: out.Message.Sender, FromMe: true,
		Timestamp: payload.At(sent.Timestamp), MessageID: sent.ID,
		Reaction: payload.ReactionBody{Text: r.Emoji, Key: payload.ReactionKey{
			ID: r.MessageID, RemoteJID: payload.Text(key.GetRemoteJID()), FromMe: key.GetFromMe(), Participant: payload.Text(key.GetParticipant()),
		}},
	}
	if d != nil {
		reaction.SenderPhone, reaction.SenderLID = d.SenderPhone, d.SenderLID
	}
	if err := m.publishEvents(s, nil, out, Event{Kind: KindMessagesReaction, Data: reaction}); err != nil {
		s.log.Warn("a reaction's events were not stored", "message_id", sent.ID, "err", err)
	}
	return sent, nil
}

// EditWindow is how long after a message WhatsApp's apps let its sender
// edit it, and apply an edit received: editMessage refuses a later edit
// before sending it, the message store refuses a later one received (by
// the edit's own time), and the simulated phones ignore one.
const EditWindow = 15 * time.Minute

// Edit is new content for message MessageID of Chat, which the account
// sent: the text of a text message, or the caption of an image, video or
// document (Type says which). ID is the edit's own message id, reserved
// for an idempotency key; "" makes a new one.
type Edit struct {
	Chat      types.JID
	MessageID string
	Type      string
	Text      string
	ID        string `json:",omitempty"`
}

// EditMessage sends the edit, then publishes messages.update (edited) with
// the new text or caption.
func (m *Manager) EditMessage(ctx context.Context, sessionID string, e Edit) (Sent, error) {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return Sent{}, err
	}
	content := &waE2E.Message{Conversation: proto.String(e.Text)}
	d := &payload.MessageStatus{ID: e.MessageID, Chat: e.Chat.String(), Status: "edited", ByMe: true, Text: payload.Text(e.Text)}
	switch e.Type {
	case "image":
		content = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String(e.Text)}}
	case "video":
		content = &waE2E.Message{VideoMessage: &waE2E.VideoMessage{Caption: proto.String(e.Text)}}
	case "document":
		content = &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String(e.Text)}}
	}
	if e.Type != "text" {
		d.Text, d.Caption = "", payload.Text(e.Text)
	}
	resp, err := cli.SendMessage(ctx, e.Chat, cli.BuildEdit(e.Chat, e.MessageID, content), whatsmeow.SendRequestExtra{ID: e.ID})
	if err != nil {
		return Sent{}, sendFault(s.id, e.Chat, "edit the message", err)
	}
	sent := Sent{ID: resp.ID, Chat: e.Chat, Timestamp: resp.Timestamp}
	d.Timestamp, d.MessageID, d.Sender = payload.At(sent.Timestamp), payload.Text(sent.ID), payload.Text(own(cli).jid().String())
	if err := m.publishEvents(s, nil, Event{Kind: KindMessagesUpdate, Data: d}); err != nil {
		s.log.Warn("an edit's event was not stored", "message_id", e.MessageID, "err", err)
	}
	return sent, nil
}
