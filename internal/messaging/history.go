package messaging

import (
	"context"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// The bounds of requestHistory's count (surface.md §2: 50 unless given).
const (
	DefaultHistoryCount = 50
	MaxHistoryCount     = 100
)

// RequestHistory asks the phone for up to count (nil: DefaultHistoryCount)
// messages of chat older than the oldest one stored; none stored, its
// most recent ones. They arrive later as messaging-history.set, stored
// like every message.
func (s *Service) RequestHistory(ctx context.Context, sessionID, chat string, count *int) error {
	jid, err := whatsapp.ParseRecipient("chat", chat)
	if err != nil {
		return err
	}
	n := DefaultHistoryCount
	if count != nil {
		n = *count
	}
	if n < 1 || n > MaxHistoryCount {
		return fault.InvalidField("count", "count must be between 1 and %d (got %d)", MaxHistoryCount, n)
	}
	req := whatsapp.HistoryRequest{Chat: jid, Count: n}
	oldest, err := s.store.oldest(ctx, sessionID, jid.String())
	if err != nil {
		return err
	}
	if oldest != nil {
		req.OldestID, req.OldestFromMe, req.OldestAt = oldest.MessageID, oldest.FromMe, oldest.Timestamp
	}
	_, err = whatsapp.OpRequestHistory().Do(ctx, s.wa, sessionID, req)
	return err
}

// oldest is the oldest message of chat that reached WhatsApp (not a
// scheduled or failed send), or nil.
func (s *Store) oldest(ctx context.Context, sessionID, chat string) (*ent.Message, error) {
	m, err := s.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.Chat(chat),
			entmessage.StatusNotIn(entmessage.StatusScheduled, entmessage.StatusFailed)).
		Order(ent.Asc(entmessage.FieldTimestamp), ent.Asc(entmessage.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find the oldest message of chat %s: %w", chat, err)
	}
	return m, nil
}
