package messaging

import (
	"context"
	"fmt"
	"strings"
	"time"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// React puts emoji on the stored message messageID (received or sent), or
// takes the account's reaction back with "". With an idempotency key it is
// sent once however often it is asked (sendkey.go).
func (s *Service) React(ctx context.Context, sessionID, messageID, emoji, idempotencyKey string) (Result, error) {
	if err := checkEmoji(emoji); err != nil {
		return Result{}, err
	}
	asked := struct{ Op, MessageID, Emoji string }{"sendReaction", messageID, emoji}
	return s.keyed(ctx, sessionID, idempotencyKey, asked, func(ctx context.Context, id string) (Result, error) {
		return s.react(ctx, sessionID, messageID, emoji, id)
	})
}

// react sends the reaction as message id ("": a new one).
func (s *Service) react(ctx context.Context, sessionID, messageID, emoji, id string) (Result, error) {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return Result{}, err
	}
	if m.Status == entmessage.StatusScheduled || m.Status == entmessage.StatusFailed {
		return Result{}, fault.New(fault.Conflict, "message %s was not sent (status %s): there is nothing to react to", messageID, m.Status)
	}
	chat, err := whatsapp.ParseJID(m.Chat)
	if err != nil {
		return Result{}, fmt.Errorf("stored chat of message %s: %w", messageID, err)
	}
	r := whatsapp.Reaction{Chat: chat, MessageID: messageID, Emoji: emoji, ID: id}
	if !m.FromMe {
		if r.Sender, err = whatsapp.ParseJID(m.Sender); err != nil {
			return Result{}, fmt.Errorf("stored sender of message %s: %w", messageID, err)
		}
	}
	sent, err := whatsapp.OpReact().Do(ctx, s.wa, sessionID, r)
	if err != nil {
		return Result{}, err
	}
	return Result{MessageID: sent.ID, Timestamp: &sent.Timestamp}, nil
}

// checkEmoji admits one emoji (emoji.go), or "" (taking a reaction back).
func checkEmoji(emoji string) error {
	if emoji != "" && !isOneEmoji(emoji) {
		return fault.InvalidField("emoji", "emoji must be one emoji, or empty to take the reaction back (got %q)", fault.Clip(emoji, fault.QuoteLen))
	}
	return nil
}

// Edit replaces the text (or, of an image, video or document, the caption)
// of messageID, which this account sent within whatsapp.EditWindow: checked
// here first, as WhatsApp refuses a later edit. With an idempotency key it
// is sent once however often it is asked (sendkey.go).
func (s *Service) Edit(ctx context.Context, sessionID, messageID, text, idempotencyKey string) (Result, error) {
	if strings.TrimSpace(text) == "" {
		return Result{}, fault.InvalidField("text", "text must not be empty")
	}
	asked := struct{ Op, MessageID, Text string }{"editMessage", messageID, text}
	return s.keyed(ctx, sessionID, idempotencyKey, asked, func(ctx context.Context, id string) (Result, error) {
		return s.edit(ctx, sessionID, messageID, text, id)
	})
}

// edit sends the edit as message id ("": a new one).
func (s *Service) edit(ctx context.Context, sessionID, messageID, text, id string) (Result, error) {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return Result{}, err
	}
	max := maxCaptionLen
	switch {
	case !m.FromMe:
		return Result{}, fault.New(fault.WhatsAppRefused, "message %s was received, not sent by this account: only its own messages can be edited", messageID)
	case m.Status != entmessage.StatusSent:
		return Result{}, fault.New(fault.Conflict, "message %s is %s: only a sent message can be edited", messageID, m.Status)
	case m.Type == "text":
		max = maxTextLen
	case m.Type != "image" && m.Type != "video" && m.Type != "document":
		return Result{}, fault.New(fault.WhatsAppRefused, "message %s is a %s: WhatsApp edits texts and the captions of images, videos and documents", messageID, m.Type)
	}
	if err := checkText("text", &text, max); err != nil {
		return Result{}, err
	}
	if age := s.now().Sub(m.Timestamp); age > whatsapp.EditWindow {
		return Result{}, fault.New(fault.WhatsAppRefused, "message %s is too old to edit: WhatsApp allows edits within %s of sending, and it was sent %s ago", messageID, whatsapp.EditWindow, age.Round(time.Minute))
	}
	chat, err := whatsapp.ParseJID(m.Chat)
	if err != nil {
		return Result{}, fmt.Errorf("stored chat of message %s: %w", messageID, err)
	}
	sent, err := whatsapp.OpEditMessage().Do(ctx, s.wa, sessionID, whatsapp.Edit{Chat: chat, MessageID: messageID, Type: m.Type, Text: text, ID: id})
	if err != nil {
		return Result{}, err
	}
	return Result{MessageID: sent.ID, Timestamp: &sent.Timestamp}, nil
}
