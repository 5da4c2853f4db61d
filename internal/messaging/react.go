package messaging

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// maxEmojiRunes bounds a reaction: the longest emoji WhatsApp offers (a
// family, a flag with skin tones) are a few code points joined.
const maxEmojiRunes = 10

// React puts emoji on the stored message messageID (received or sent), or
// takes the account's reaction back with "".
func (s *Service) React(ctx context.Context, sessionID, messageID, emoji string) (Result, error) {
	if err := checkEmoji(emoji); err != nil {
		return Result{}, err
	}
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
	r := whatsapp.Reaction{Chat: chat, MessageID: messageID, Emoji: emoji}
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

// checkEmoji admits one emoji, or "" (taking a reaction back): no letters,
// digits alone or spaces, and a few code points at most.
func checkEmoji(emoji string) error {
	if emoji == "" {
		return nil
	}
	ok := utf8.ValidString(emoji) && utf8.RuneCountInString(emoji) <= maxEmojiRunes
	pictographic := false
	for _, r := range emoji {
		ok = ok && !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsControl(r)
		pictographic = pictographic || r > 0x2000
	}
	if !ok || !pictographic {
		return fault.InvalidField("emoji", "emoji must be one emoji, or empty to take the reaction back (got %q)", fault.Clip(emoji, fault.QuoteLen))
	}
	return nil
}

// Edit replaces the text (or, of an image, video or document, the caption)
// of messageID, which this account sent within whatsapp.EditWindow: checked here
// first, as WhatsApp refuses a later edit.
func (s *Service) Edit(ctx context.Context, sessionID, messageID, text string) (Result, error) {
	if strings.TrimSpace(text) == "" {
		return Result{}, fault.InvalidField("text", "text must not be empty")
	}
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
	sent, err := whatsapp.OpEditMessage().Do(ctx, s.wa, sessionID, whatsapp.Edit{Chat: chat, MessageID: messageID, Type: m.Type, Text: text})
	if err != nil {
		return Result{}, err
	}
	return Result{MessageID: sent.ID, Timestamp: &sent.Timestamp}, nil
}
