package whatsapp

// Conversation: read receipts and what the account shows of itself in a
// chat (online, typing, recording), and the contacts' presence it asks for.

import (
	"context"
	"errors"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// Read marks messages of one chat read. WhatsApp takes one receipt per
// sender, so the messages come grouped by who sent them: in a direct chat
// the contact, in a group each member.
type Read struct {
	Chat    types.JID
	Senders []ReadBy
}

// ReadBy is the messages of one sender.
type ReadBy struct {
	Sender types.JID
	IDs    []string
}

// MarkRead sends the read receipts (read-self when the account's read
// receipts privacy is "none", as WhatsApp's apps do), then publishes
// chats.update: the chat is read, no unread message left.
func (m *Manager) MarkRead(ctx context.Context, sessionID string, r Read) error {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, by := range r.Senders {
		if len(by.IDs) == 0 {
			continue
		}
		if err := cli.MarkRead(ctx, by.IDs, now, r.Chat, by.Sender); err != nil {
			return classify(sessionID, "send the read receipts", err)
		}
	}
	zero := 0
	err = m.publishEvents(s, nil, Event{Kind: KindChatsUpdate, Data: &payload.ChatUpdate{
		ID: r.Chat.String(), Read: ptr(true), UnreadCount: &zero, Timestamp: payload.At(now),
	}})
	if err != nil {
		// WhatsApp has the receipts: the caller learns they were sent.
		s.log.Warn("a read chat's event was not stored", "err", err)
	}
	return nil
}

// The presence states the account can show.
const (
	PresenceAvailable   = "available"
	PresenceUnavailable = "unavailable"
	PresenceComposing   = "composing"
	PresenceRecording   = "recording"
	PresencePaused      = "paused"
)

// Presence is what the account shows: available or unavailable to its
// contacts, or composing, recording or paused in Chat.
type Presence struct {
	State string
	Chat  types.JID // empty for available and unavailable
}

// SendPresence shows p. Availability goes to the contacts that subscribed
// to the account; a chat state to the chat.
func (m *Manager) SendPresence(ctx context.Context, sessionID string, p Presence) error {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	switch p.State {
	case PresenceAvailable, PresenceUnavailable:
		// A device linked a moment ago may not have the name from the
		// phone yet (pushname.go).
		s.nameSignalOf().wait(ctx)
		err = cli.SendPresence(ctx, types.Presence(p.State))
		if errors.Is(err, whatsmeow.ErrNoPushName) {
			// WhatsApp shows a presence with the account's name.
			return fault.Wrap(err, fault.Conflict, "session %s has no profile name yet: set one (updateProfileName) before showing its presence", sessionID)
		}
	case PresenceComposing:
		err = cli.SendChatPresence(ctx, p.Chat, types.ChatPresenceComposing, "")
	case PresenceRecording:
		err = cli.SendChatPresence(ctx, p.Chat, types.ChatPresenceComposing, types.ChatPresenceMediaAudio)
	case PresencePaused:
		err = cli.SendChatPresence(ctx, p.Chat, types.ChatPresencePaused, "")
	default:
		return errors.New("whatsapp: unknown presence state " + p.State)
	}
	if err != nil {
		return classify(sessionID, "show its presence", err)
	}
	return nil
}
