package messaging

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/schema"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/storage"
)

// react applies a reaction to the stored message it names: each person has
// one reaction on a message, a new one replacing theirs and an empty one
// taking it back. A reaction sent in another chat than the message's is
// refused, as WhatsApp's apps do and as a forged edit is (judge): anyone
// can put any message id in a reaction, and ids are seen by every group
// member. The message stays as it was, and refused is the messages.update
// (reaction-refused) that says so in place of messages.reaction. A message
// this store never saw is nothing to protect: the event stays as it came.
func (s *Store) react(ctx context.Context, sessionID string, d *payload.Reaction) (refused *payload.MessageStatus, err error) {
	// Under the row's lock: two people reacting at once must not each
	// write back the list the other had not joined yet (PostgreSQL; on
	// SQLite the writer is alone anyway).
	err = ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		m, err := tx.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(d.ID), storage.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("look up message %s: %w", d.ID, err)
		}
		if m.Chat != d.Chat {
			refused = &payload.MessageStatus{
				ID: d.ID, Chat: d.Chat, Status: "reaction-refused", Timestamp: d.Timestamp,
				MessageID: payload.Text(d.MessageID), Sender: payload.Text(d.Sender),
				Error: "a reaction sent in another chat than the message's: not applied",
			}
			return nil
		}
		rs := slices.DeleteFunc(slices.Clone(m.Reactions), func(r schema.Reaction) bool {
			return r.Sender == d.Sender || (d.FromMe && r.FromMe)
		})
		if d.Reaction.Text != "" {
			rs = append(rs, schema.Reaction{Emoji: d.Reaction.Text, Sender: d.Sender, FromMe: d.FromMe})
		}
		if err := tx.Message.UpdateOne(m).SetReactions(rs).Exec(ctx); err != nil {
			return fmt.Errorf("store a reaction to message %s: %w", d.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return refused, nil
}

// applyEdit keeps an edit its sender made: the new text, or caption.
func (s *Store) applyEdit(ctx context.Context, m *ent.Message, d *payload.MessageStatus) error {
	u := m.Update().SetEditedAt(time.Now().UTC())
	switch {
	case d.Text != "":
		u.SetText(string(d.Text))
	case d.Caption != "":
		u.SetCaption(string(d.Caption))
	default:
		return nil
	}
	if err := u.Exec(ctx); err != nil {
		return fmt.Errorf("store an edit of message %s: %w", m.MessageID, err)
	}
	return nil
}
