package messaging

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/schema"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/whatsapp"
)

// Store is the message store: every message sent and received, recorded
// from the events before they are stored (the session sink calls Record),
// read by sends (quotes, delete for everyone) and media downloads. It is
// apart from the Service, which sends through the session manager, so that
// the sink the manager publishes to can be built with it before either.
type Store struct {
	db *ent.Client

	// recordMu lets one Record write at a time. Every session's events
	// pass through Record on the session's own goroutine: with a hundred
	// sessions, a hundred writers asked SQLite for its one write lock at
	// once, and a writer that finds it taken sleeps in the busy handler
	// (1, 2, 5 … 100 ms) however soon the lock is free, so the event
	// log's writer and the webhook dispatcher waited behind them. Queued
	// here, they take the lock in turn without sleeping. PostgreSQL
	// locks rows, not the database: there the queue would only slow
	// sessions down (concurrent).
	recordMu   sync.Mutex
	concurrent bool
	// keep says which media the keeper downloads (KeepMedia); nil: none.
	keep *mediakeep.Options
}

// NewStore returns the message store over db; concurrentWrites says the
// database takes writers at once (PostgreSQL): Records then do not queue
// on each other.
func NewStore(db *ent.Client, concurrentWrites bool) *Store {
	return &Store{db: db, concurrent: concurrentWrites}
}

// KeepMedia makes the store mark the media opts keep (nil: none) as due
// for the media keeper (mediakeep.Keeper.Keeps) in the statement that
// records their message: a download owed is as durable as the message.
// Called once, as the store is built; it returns s.
func (s *Store) KeepMedia(opts *mediakeep.Options) *Store {
	s.keep = opts
	return s
}

// Record keeps what an event says about messages: a sent or received
// message (the first record of an id wins, except that a scheduled one
// becomes sent), reactions, revokes, edits and votes. It is called before
// the event is stored and acknowledged to WhatsApp, so an error here makes
// WhatsApp send it again. What WhatsApp's apps would not apply it turns
// into the event that says so, in place: a revoke or an edit refused
// (judge), a reaction from another chat than its message's (react).
func (s *Store) Record(ctx context.Context, sessionID string, ev *whatsapp.Event) error {
	if !s.concurrent {
		s.recordMu.Lock()
		defer s.recordMu.Unlock()
	}
	if d, ok := ev.Data.(*payload.Reaction); ok && ev.Kind == whatsapp.KindMessagesReaction {
		refused, err := s.react(ctx, sessionID, d)
		if refused != nil {
			ev.Kind, ev.Data = whatsapp.KindMessagesUpdate, refused
		}
		return err
	}
	if m := ev.Message; m != nil && ev.Kind == whatsapp.KindMediaUpdate {
		return s.replaceMedia(ctx, sessionID, m)
	}
	if m := ev.Message; m != nil {
		return s.recordMessage(ctx, sessionID, m, false)
	}
	if ev.Kind == whatsapp.KindHistorySet {
		return s.recordHistory(ctx, sessionID, ev.History)
	}
	if d, ok := ev.Data.(*payload.ChatUpdate); ok && ev.Kind == whatsapp.KindChatsUpdate && d.Read != nil && *d.Read {
		return s.markChatRead(ctx, sessionID, d.ID)
	}
	if d, ok := ev.Data.(*payload.MessageStatus); ok && ev.Kind == whatsapp.KindMessagesUpdate && d.MessageID != "" {
		switch d.Status {
		case "revoked", "edited":
			return s.judge(ctx, sessionID, d)
		case "voted":
			return s.vote(ctx, sessionID, d)
		}
	}
	return nil
}

// RecordsIn reports whether RecordIn keeps what ev says: a message sent
// or received (its record only; the other events' writes run in
// transactions of their own, through Record), on SQLite. On PostgreSQL
// (concurrent) the sessions' records run at once, each in its own
// transactions: in the event log's one batching goroutine they would
// wait on each other's round trips to the server (BenchmarkSinkInbound on
// PostgreSQL: 131 -> 113 texts/s, 8.3 -> 2.9 texts per commit; the crash
// test's one session fell from the 400 texts in a minute it needs to
// about 5 a second), where SQLite runs them one at a time anyway.
func (s *Store) RecordsIn(ev whatsapp.Event) bool {
	return !s.concurrent && ev.Message != nil && (ev.Kind == whatsapp.KindInboundMessage || ev.Kind == whatsapp.KindOutboundMessage)
}

// RecordIn is Record of a message event (RecordsIn) in tx, the
// transaction that stores the event (the event log's batch): the message
// row commits with its event or not at all, and a batch of events shares
// one commit. It needs no turn of its own (the transaction holds the
// database's writer).
func (s *Store) RecordIn(ctx context.Context, tx *ent.Tx, sessionID string, ev *whatsapp.Event) error {
	if !s.RecordsIn(*ev) {
		return fmt.Errorf("record %s in the event's transaction: only messages are", ev.Kind)
	}
	in := &Store{db: tx.Client(), concurrent: true, keep: s.keep}
	return in.recordMessage(ctx, sessionID, ev.Message, false)
}

// judge applies a revoke or an edit a contact or the account's other
// device sent, when WhatsApp's own clients would: from the message's chat,
// by its sender (or, a revoke in a group, by an admin), and an edit within
// whatsapp.EditWindow of the message by the edit's own time (the stanza's,
// d.Timestamp). Anyone can put any message id in a revoke, and ids are
// seen by every group member. A refused one becomes revoke-refused or
// edit-refused, the message left as it was; d.Sender names who sent it
// either way. A message this store never saw is nothing to protect: the
// event stays as it came.
func (s *Store) judge(ctx context.Context, sessionID string, d *payload.MessageStatus) error {
	m, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(d.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up message %s: %w", d.ID, err)
	}
	revoke := d.Status == "revoked"
	bySender := m.Chat == d.Chat && ((m.FromMe && d.ByMe) || (!m.FromMe && !d.ByMe && d.Sender != "" && m.Sender == string(d.Sender)))
	byAdmin := revoke && m.Chat == d.Chat && d.ByAdmin && strings.HasSuffix(m.Chat, "@g.us")
	late := !revoke && d.Timestamp.Sub(m.Timestamp) > whatsapp.EditWindow
	if (!bySender && !byAdmin) || late {
		what, status := "edit", "edit-refused"
		if revoke {
			what, status = "revoke", "revoke-refused"
		}
		d.Status = status
		d.Text, d.Caption = "", ""
		d.Error = payload.Text(refusal(what, m, d, bySender))
		return nil
	}
	if !revoke {
		return s.applyEdit(ctx, m, d)
	}
	return s.setStatus(ctx, sessionID, d.ID, entmessage.StatusRevoked)
}

// refusal says why a revoke or an edit was not applied; bySender: it came
// from the message's sender, in its chat.
func refusal(what string, m *ent.Message, d *payload.MessageStatus, bySender bool) string {
	switch {
	case m.Chat != d.Chat:
		return fmt.Sprintf("a %s sent in another chat than the message's: not applied", what)
	case what == "revoke":
		return "a revoke by someone other than the message's sender or a group admin: not applied"
	case !bySender:
		return "an edit by someone other than the message's sender: not applied"
	}
	return fmt.Sprintf("an edit sent %s after the message, later than WhatsApp's %s window: not applied",
		d.Timestamp.Sub(m.Timestamp).Round(time.Second), whatsapp.EditWindow)
}

// ChatSeen reports whether the store holds a message of chat in the
// session other than messageID: the first message of a chat makes it known
// (chats.upsert), and the same message sent again by WhatsApp still does.
func (s *Store) ChatSeen(ctx context.Context, sessionID, chat, messageID string) (bool, error) {
	ok, err := s.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.Chat(chat), entmessage.MessageIDNEQ(messageID)).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("look up chat %s: %w", chat, err)
	}
	return ok, nil
}

// replaceMedia stores the new location of a message's media, which the
// phone uploaded again (messages.media-update). Media kept is not kept
// anew; media not kept yet (the keeper asked, or the media route did) is
// due for the keeper at once.
func (s *Store) replaceMedia(ctx context.Context, sessionID string, m *whatsapp.Message) error {
	ref, err := encodeMediaRef(m.Media)
	if err != nil || ref == nil {
		return err
	}
	u := s.db.Message.Update().Where(entmessage.SessionID(sessionID), entmessage.MessageID(m.ID)).SetMedia(ref)
	if s.keep != nil && s.keep.Wants(m.Type, int64(m.Media.FileLength), m.ViewOnce) {
		u.SetMediaDue(time.Now().UTC())
	}
	_, err = u.Save(ctx)
	if err != nil {
		return fmt.Errorf("store the new media location of message %s: %w", m.ID, err)
	}
	return nil
}

// recordMessage records m; the media of one recorded from a history sync
// is left to the download on demand: a history sync brings months of old
// media at once, most of it gone from WhatsApp's servers, each a media
// retry to the phone.
func (s *Store) recordMessage(ctx context.Context, sessionID string, m *whatsapp.Message, history bool) error {
	status := entmessage.StatusReceived
	if m.FromMe {
		status = entmessage.StatusSent
	}
	if m.Type == "revoke" {
		return nil // the revoke itself is not a message of the chat; messages.update carries it
	}
	create := s.db.Message.Create().
		SetSessionID(sessionID).SetMessageID(m.ID).SetChat(m.Chat).SetSender(m.Sender).
		SetFromMe(m.FromMe).SetType(m.Type).SetText(m.Text).SetCaption(m.Caption).
		SetStatus(status).SetTimestamp(m.Timestamp.UTC()).SetViewOnce(m.ViewOnce)
	ref, err := encodeMediaRef(m.Media)
	if err != nil {
		return err
	}
	if ref != nil {
		create.SetMedia(ref)
	}
	due := ref != nil && !history && s.keep != nil && s.keep.Wants(m.Type, int64(m.Media.FileLength), m.ViewOnce)
	if due {
		create.SetMediaDue(mediakeep.DueAt(time.Now().UTC(), m.FromMe))
	}
	if p := m.Poll; p != nil {
		create.SetPoll(&schema.Poll{Options: p.Options, Selectable: p.Selectable})
	}
	conflict := []entsql.ConflictOption{entsql.ConflictColumns(entmessage.FieldSessionID, entmessage.FieldMessageID)}
	if m.FromMe {
		// A scheduled send that went out: the reserved record becomes sent,
		// with the media it was sent with. One statement, not an insert
		// then an update: this runs for every message sent.
		conflict = append(conflict,
			entsql.ResolveWith(func(u *entsql.UpdateSet) {
				u.SetExcluded(entmessage.FieldStatus)
				u.SetExcluded(entmessage.FieldTimestamp)
				if ref != nil {
					u.SetExcluded(entmessage.FieldMedia)
				}
				if due {
					u.SetExcluded(entmessage.FieldMediaDue)
				}
			}),
			entsql.UpdateWhere(entsql.EQ(entmessage.FieldStatus, string(entmessage.StatusScheduled))))
	} else {
		conflict = append(conflict, entsql.ResolveWithIgnore())
	}
	err = create.OnConflict(conflict...).Exec(ctx)
	if m.FromMe && errors.Is(err, sql.ErrNoRows) {
		// The record exists and is not scheduled: the update's WHERE kept
		// it as it was, so the statement returned no row.
		err = nil
	}
	if err != nil {
		return fmt.Errorf("record message %s: %w", m.ID, err)
	}
	return nil
}

// recordHistory keeps the messages a history sync carried like any other
// (the first record of an id wins: a message the session saw live stays as
// it was stored then). A reaction, an edit or a revoke in a history sync
// is what happened to another message, never a message of its chat.
func (s *Store) recordHistory(ctx context.Context, sessionID string, ms []whatsapp.Message) error {
	for i := range ms {
		switch ms[i].Type {
		case "reaction", "edit", "revoke":
			continue
		}
		if err := s.recordMessage(ctx, sessionID, &ms[i], true); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) setStatus(ctx context.Context, sessionID, messageID string, st entmessage.Status) error {
	n, err := s.db.Message.Update().
		Where(entmessage.SessionID(sessionID), entmessage.MessageID(messageID)).
		SetStatus(st).Save(ctx)
	if err != nil {
		return fmt.Errorf("set status of message %s: %w", messageID, err)
	}
	if n == 0 {
		return fault.New(fault.NotFound, "message %s not found in session %s", messageID, sessionID)
	}
	return nil
}
