package messaging

import (
	"context"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
)

// markChatRead marks every received message of chat read: the chat was
// read here (markRead) or on another device of the account. A message
// that arrives afterwards is unread again.
func (s *Store) markChatRead(ctx context.Context, sessionID, chat string) error {
	_, err := s.db.Message.Update().
		Where(entmessage.SessionID(sessionID), entmessage.Chat(chat), entmessage.FromMe(false), entmessage.ReadAtIsNil()).
		SetReadAt(time.Now().UTC()).Save(ctx)
	if err != nil {
		return fmt.Errorf("mark chat %s read: %w", chat, err)
	}
	return nil
}

// unread lists the received messages of chat not marked read, oldest
// first, at most limit.
func (s *Store) unread(ctx context.Context, sessionID, chat string, limit int) ([]*ent.Message, error) {
	ms, err := s.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.Chat(chat), entmessage.FromMe(false), entmessage.ReadAtIsNil(),
			entmessage.StatusNEQ(entmessage.StatusRevoked)).
		Order(ent.Asc(entmessage.FieldTimestamp)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the unread messages of chat %s: %w", chat, err)
	}
	return ms, nil
}

// byIDs returns the stored messages of the session among ids, by id.
func (s *Store) byIDs(ctx context.Context, sessionID string, ids []string) (map[string]*ent.Message, error) {
	ms, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageIDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up messages: %w", err)
	}
	out := make(map[string]*ent.Message, len(ms))
	for _, m := range ms {
		out[m.MessageID] = m
	}
	return out, nil
}
