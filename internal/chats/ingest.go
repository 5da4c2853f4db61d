package chats

import (
	"context"
	"time"

	"github.com/wagraph/wagraph/ent"
	entchat "github.com/wagraph/wagraph/ent/chat"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// forever is the end of a mute without end.
var forever = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// later is whether (at, row) comes after (than, thanRow) in the lists'
// order: by time, then the later-stored first.
func later(at time.Time, row int, than time.Time, thanRow int) bool {
	return at.After(than) || (at.Equal(than) && row > thanRow)
}

// chatRow returns the session's chat jid under the row's lock, created
// when new (when it became known: now).
func (s *Store) chatRow(ctx context.Context, tx *ent.Tx, sessionID, jid string) (*ent.Chat, bool, error) {
	c, err := tx.Chat.Query().Where(entchat.SessionID(sessionID), entchat.Jid(jid), storage.ForUpdate).Only(ctx)
	if err == nil {
		return c, false, nil
	}
	if !ent.IsNotFound(err) {
		return nil, false, err
	}
	c, err = tx.Chat.Create().SetSessionID(sessionID).SetJid(jid).SetIsGroup(isGroup(jid)).
		SetActiveAt(s.now().UTC()).Save(ctx)
	return c, true, err
}

// message applies a stored message to its chat: the chat's last message
// when it is the newest, and, received live (not from a history sync),
// one more unread — once, however often WhatsApp sends it: the message
// keeps the row of its first record, and a row counted is never counted
// again (counted_row).
func (s *Store) message(ctx context.Context, sessionID string, m *whatsapp.Message, live bool) error {
	rec, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(m.ID)).
		Select(entmessage.FieldID, entmessage.FieldChat, entmessage.FieldFromMe, entmessage.FieldTimestamp).Only(ctx)
	if ent.IsNotFound(err) {
		return nil // not kept by the message store
	}
	if err != nil {
		return err
	}
	return s.withTx(ctx, "apply message "+m.ID+" to chat "+rec.Chat, func(tx *ent.Tx) error {
		c, _, err := s.chatRow(ctx, tx, sessionID, rec.Chat)
		if err != nil {
			return err
		}
		u := tx.Chat.UpdateOne(c)
		changed := false
		if c.LastMessageID == "" || c.LastMessageAt == nil || later(rec.Timestamp, rec.ID, *c.LastMessageAt, c.ActiveRow) {
			u.SetLastMessageID(m.ID).SetLastMessageAt(rec.Timestamp).SetActiveRow(rec.ID)
			if rec.Timestamp.After(c.ActiveAt) || c.LastMessageID == "" {
				u.SetActiveAt(rec.Timestamp)
			}
			changed = true
		}
		if live && !rec.FromMe && rec.ID > c.CountedRow {
			u.SetUnreadCount(c.UnreadCount + 1).SetCountedRow(rec.ID)
			changed = true
		}
		if !changed {
			return nil
		}
		return u.Exec(ctx)
	})
}

// upsertChat keeps a chat the session has (chats.upsert: a history sync's
// conversation, a group joined, the first message of a chat). Its name,
// LID and last activity always apply; its state (unread, archived, pinned,
// muted) only to a chat new to the store: a group's chats.upsert at every
// connect says not archived, and app state (chats.update) is what changes
// a known chat's state.
func (s *Store) upsertChat(ctx context.Context, sessionID string, d *payload.Chat) error {
	if d.ID == "" {
		return nil
	}
	return s.withTx(ctx, "keep chat "+d.ID, func(tx *ent.Tx) error {
		c, created, err := s.chatRow(ctx, tx, sessionID, d.ID)
		if err != nil {
			return err
		}
		u := tx.Chat.UpdateOne(c)
		if d.Name != "" {
			u.SetName(string(d.Name))
		}
		if d.LID != "" {
			u.SetLid(lidOf(string(d.LID)))
		}
		if t := d.LastMessageAt.Time; !t.IsZero() && (created || t.After(c.ActiveAt)) {
			u.SetActiveAt(t.UTC())
		}
		if created {
			if d.UnreadCount != nil {
				u.SetUnreadCount(max(0, *d.UnreadCount))
			}
			if d.Archived != nil {
				u.SetArchived(*d.Archived)
			}
			if d.Pinned != nil {
				u.SetPinned(*d.Pinned)
			}
			if t := d.MuteUntil.Time; !t.IsZero() {
				u.SetMutedUntil(t.UTC())
			}
		}
		return u.Exec(ctx)
	})
}

// updateChat applies a change of a chat's state (chats.update: app state
// from the phone or another device, markRead here).
func (s *Store) updateChat(ctx context.Context, sessionID string, d *payload.ChatUpdate) error {
	if d.ID == "" {
		return nil
	}
	if d.Archived == nil && d.Pinned == nil && d.Muted == nil && d.Read == nil && d.UnreadCount == nil && d.Cleared == nil {
		return nil // a group's disappearing timer: nothing the chat store keeps
	}
	return s.withTx(ctx, "update chat "+d.ID, func(tx *ent.Tx) error {
		c, _, err := s.chatRow(ctx, tx, sessionID, d.ID)
		if err != nil {
			return err
		}
		u := tx.Chat.UpdateOne(c)
		if d.Archived != nil {
			u.SetArchived(*d.Archived)
		}
		if d.Pinned != nil {
			u.SetPinned(*d.Pinned)
		}
		if d.Muted != nil {
			switch {
			case !*d.Muted:
				u.ClearMutedUntil()
			case d.MuteUntil.IsZero():
				u.SetMutedUntil(forever)
			default:
				u.SetMutedUntil(d.MuteUntil.UTC())
			}
		}
		switch {
		case d.UnreadCount != nil:
			u.SetUnreadCount(max(0, *d.UnreadCount))
		case d.Read != nil && *d.Read, d.Cleared != nil && *d.Cleared:
			u.SetUnreadCount(0)
		case d.Read != nil:
			// Marked unread on a device: shown with at least one unread,
			// as WhatsApp's apps show it.
			u.SetUnreadCount(max(1, c.UnreadCount))
		}
		return u.Exec(ctx)
	})
}

// deleteChat forgets a chat deleted on the phone or another device (its
// messages stay in the message store, as sent and received).
func (s *Store) deleteChat(ctx context.Context, sessionID, jid string) error {
	_, err := s.db.Chat.Delete().Where(entchat.SessionID(sessionID), entchat.Jid(jid)).Exec(ctx)
	return err
}

// renameChat keeps a group's new subject.
func (s *Store) renameChat(ctx context.Context, sessionID, jid, name string) error {
	_, err := s.db.Chat.Update().Where(entchat.SessionID(sessionID), entchat.Jid(jid)).SetName(name).Save(ctx)
	return err
}
