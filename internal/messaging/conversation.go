package messaging

import (
	"context"
	"fmt"
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// The bounds of markRead: the messages it names, and those it marks read
// without ids; the bytes of one id. WhatsApp's own ids are a few dozen
// ASCII characters, and every id named goes to WhatsApp in the receipt
// (1,000 ids of 16 KiB made a receipt of 16 MiB).
const (
	MaxReadIDs      = 1000
	MaxMessageIDLen = 128
)

// MarkRead sends read receipts for messages of chat: those ids names, or
// without ids every received message of the chat not yet read; the chat
// then has no unread message (chats.update). A named message must be one
// this account received in chat; one not stored is taken as the contact's
// in a direct chat, and refused in a group, where its sender is unknown.
func (s *Service) MarkRead(ctx context.Context, sessionID, chat string, ids []string) error {
	jid, err := whatsapp.ParseRecipient("chat", chat)
	if err != nil {
		return err
	}
	if len(ids) > MaxReadIDs {
		return fault.InvalidField("messageIds", "messageIds must name at most %d messages (got %d)", MaxReadIDs, len(ids))
	}
	read := whatsapp.Read{Chat: jid}
	at := map[string]int{} // a sender's place in read.Senders
	add := func(sender whatsapp.JID, id string) {
		k := sender.String()
		i, ok := at[k]
		if !ok {
			i, at[k] = len(read.Senders), len(read.Senders)
			read.Senders = append(read.Senders, whatsapp.ReadBy{Sender: sender})
		}
		read.Senders[i].IDs = append(read.Senders[i].IDs, id)
	}
	if len(ids) == 0 {
		ms, err := s.store.unread(ctx, sessionID, jid.String(), MaxReadIDs)
		if err != nil {
			return err
		}
		for _, m := range ms {
			sender, err := whatsapp.ParseJID(m.Sender)
			if err != nil {
				return fmt.Errorf("stored message %s: sender %q: %w", m.MessageID, m.Sender, err)
			}
			add(sender, m.MessageID)
		}
	} else if err := s.namedReads(ctx, sessionID, jid, ids, add); err != nil {
		return err
	}
	_, err = whatsapp.OpMarkRead().Do(ctx, s.wa, sessionID, read)
	return err
}

// namedReads checks the ids markRead names and hands each to add with its
// sender.
func (s *Service) namedReads(ctx context.Context, sessionID string, chat whatsapp.JID, ids []string, add func(whatsapp.JID, string)) error {
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		field := fmt.Sprintf("messageIds[%d]", i)
		switch {
		case strings.TrimSpace(id) == "":
			return fault.InvalidField(field, "%s must not be empty", field)
		case len(id) > MaxMessageIDLen:
			return fault.InvalidField(field, "%s must be at most %d bytes (got %d)", field, MaxMessageIDLen, len(id))
		}
	}
	stored, err := s.store.byIDs(ctx, sessionID, ids)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		field := fmt.Sprintf("messageIds[%d]", i)
		m := stored[id]
		switch {
		case m != nil && m.FromMe:
			return fault.InvalidField(field, "%s: message %s was sent by this account; only received messages are marked read", field, fault.Clip(id, fault.QuoteLen))
		case m != nil && m.Chat != chat.String():
			return fault.InvalidField(field, "%s: message %s is a message of another chat (%s)", field, fault.Clip(id, fault.QuoteLen), m.Chat)
		case m != nil:
			sender, err := whatsapp.ParseJID(m.Sender)
			if err != nil {
				return fmt.Errorf("stored message %s: sender %q: %w", id, m.Sender, err)
			}
			add(sender, id)
		case chat.Server == whatsapp.GroupServer:
			return fault.New(fault.NotFound, "%s: message %s of group %s is not stored, so its sender is unknown", field, fault.Clip(id, fault.QuoteLen), chat)
		default:
			add(chat, id)
		}
	}
	return nil
}

// The presence states of the API, as GraphQL's PresenceState names them.
var presenceStates = map[string]string{
	"AVAILABLE": whatsapp.PresenceAvailable, "UNAVAILABLE": whatsapp.PresenceUnavailable,
	"COMPOSING": whatsapp.PresenceComposing, "RECORDING": whatsapp.PresenceRecording, "PAUSED": whatsapp.PresencePaused,
}

// SendPresence shows the account AVAILABLE or UNAVAILABLE to its contacts
// (no chat), or COMPOSING, RECORDING or PAUSED in chat.
func (s *Service) SendPresence(ctx context.Context, sessionID, state string, chat *string) error {
	st, ok := presenceStates[strings.ToUpper(strings.TrimSpace(state))]
	if !ok {
		return fault.InvalidField("state", "state must be one of AVAILABLE, UNAVAILABLE, COMPOSING, RECORDING, PAUSED; got %q", fault.Clip(state, fault.QuoteLen))
	}
	p := whatsapp.Presence{State: st}
	given := chat != nil && strings.TrimSpace(*chat) != ""
	switch {
	case st == whatsapp.PresenceAvailable || st == whatsapp.PresenceUnavailable:
		if given {
			return fault.InvalidField("chat", "chat goes with COMPOSING, RECORDING and PAUSED only: %s is the account's own presence, shown to all its contacts", strings.ToUpper(st))
		}
	case !given:
		return fault.InvalidField("chat", "chat is required with %s: the chat the account is shown typing, recording or paused in", strings.ToUpper(st))
	default:
		jid, err := whatsapp.ParseRecipient("chat", *chat)
		if err != nil {
			return err
		}
		p.Chat = jid
	}
	_, err := whatsapp.OpSendPresence().Do(ctx, s.wa, sessionID, p)
	return err
}

// SubscribePresence asks WhatsApp for the availability of the user chat:
// presence.update events follow, for as long as the session's connection
// lasts.
func (s *Service) SubscribePresence(ctx context.Context, sessionID, chat string) error {
	jid, err := whatsapp.ParseRecipient("chat", chat)
	if err != nil {
		return err
	}
	if jid.Server == whatsapp.GroupServer {
		return fault.InvalidField("chat", "chat must be a user, not a group: WhatsApp tells the presence of people")
	}
	_, err = whatsapp.OpSubscribePresence().Do(ctx, s.wa, sessionID, jid)
	return err
}

// maxCallIDLen bounds a call id: WhatsApp's are 32 hex digits.
const maxCallIDLen = 64

// RejectCall declines the incoming call callID from the user from.
func (s *Service) RejectCall(ctx context.Context, sessionID, callID, from string) error {
	if callID == "" || len(callID) > maxCallIDLen || strings.IndexFunc(callID, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) >= 0 {
		return fault.InvalidField("callId", "callId must be the id of a call event: 1 to %d letters and digits (got %q)", maxCallIDLen, fault.Clip(callID, fault.QuoteLen))
	}
	jid, err := whatsapp.ParseRecipient("from", from)
	if err != nil {
		return err
	}
	if jid.Server == whatsapp.GroupServer {
		return fault.InvalidField("from", "from must be the caller, a user: the call event's from")
	}
	_, err = whatsapp.OpRejectCall().Do(ctx, s.wa, sessionID, whatsapp.CallRef{CallID: callID, From: jid})
	return err
}
