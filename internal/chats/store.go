// Package chats is the chat store: the chats, contacts and phone <-> LID
// identities of each session, kept from the session's own events as they
// are stored (messages, receipts, reactions, history sync, app state, push
// names, contacts), and the stored reads built on them and on the message
// store (chats, chat, messages, contacts). The reads are database reads
// only: they answer whatever the session's status, on any process of a
// cluster.
package chats

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/whatsapp"
)

// Store keeps and reads the chat store of every session.
type Store struct {
	db  *ent.Client
	now func() time.Time
	// tx, when set, is the transaction the store's writes join (RecordIn):
	// db is then its client.
	tx *ent.Tx

	// writeMu lets one Record write at a time on SQLite, for the reason
	// messaging.Store's recordMu gives (a queue here, not SQLite's busy
	// handler's sleeps); PostgreSQL takes writers at once (concurrent).
	writeMu    *sync.Mutex
	concurrent bool

	// learned spares a write for a phone <-> LID pair already stored:
	// every message carries its sender's pair.
	learned *memory
	// seen spares a write for a message sender's contact already stored
	// with that push name.
	seen *memory
}

// NewStore returns the chat store over db. concurrentWrites says the
// database takes writers at once (PostgreSQL); now is the clock (nil:
// time.Now).
func NewStore(db *ent.Client, concurrentWrites bool, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, concurrent: concurrentWrites, now: now, writeMu: &sync.Mutex{}, learned: &memory{}, seen: &memory{}}
}

// Record keeps what ev says about the session's chats, contacts and
// identities. The sink calls it for every event once the message store has
// recorded it, before the event is stored and acknowledged: an error makes
// WhatsApp send it again, and recording an event twice changes nothing.
func (s *Store) Record(ctx context.Context, sessionID string, ev whatsapp.Event) error {
	if !s.concurrent {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	if err := s.learnFrom(ctx, sessionID, ev.Data); err != nil {
		return err
	}
	switch d := ev.Data.(type) {
	case *payload.Message:
		if ev.Message == nil || !inChat(ev.Message.Type) ||
			(ev.Kind != whatsapp.KindInboundMessage && ev.Kind != whatsapp.KindOutboundMessage) {
			return nil
		}
		if err := s.message(ctx, sessionID, ev.Message, true); err != nil {
			return err
		}
		if !d.FromMe {
			return s.sender(ctx, sessionID, d)
		}
	case *payload.HistorySet:
		for i := range ev.History {
			m := &ev.History[i]
			if !inChat(m.Type) {
				continue
			}
			if err := s.message(ctx, sessionID, m, false); err != nil {
				return err
			}
		}
	case *payload.Chat:
		return s.upsertChat(ctx, sessionID, d)
	case *payload.ChatUpdate:
		return s.updateChat(ctx, sessionID, d)
	case *payload.ChatDelete:
		return s.deleteChat(ctx, sessionID, d.ID)
	case *payload.GroupUpdate:
		if d.Subject != "" {
			return s.renameChat(ctx, sessionID, d.ID, string(d.Subject))
		}
	case *payload.Contact:
		name := d.FullName
		if name == "" {
			name = d.FirstName
		}
		return s.upsertContact(ctx, sessionID, contactFacts{jid: d.ID, phone: string(d.Phone), lid: string(d.LID),
			name: string(name), pushName: string(d.PushName), businessName: string(d.BusinessName)})
	case *payload.ContactUpdate:
		if d.PushName == "" && d.BusinessName == "" {
			return nil
		}
		return s.upsertContact(ctx, sessionID, contactFacts{jid: d.ID, phone: string(d.Phone), lid: string(d.LID),
			pushName: string(d.PushName), businessName: string(d.BusinessName)})
	}
	return nil
}

// RecordIn is Record with every write in tx, the transaction that stores
// the event (the event log's batch: the sink's message events): the chat
// store's rows commit with the event or not at all, and a batch of
// events shares one commit. The writes need no turn of their own (the
// transaction holds the database's writer).
func (s *Store) RecordIn(ctx context.Context, tx *ent.Tx, sessionID string, ev whatsapp.Event) error {
	in := *s
	in.db, in.tx, in.concurrent = tx.Client(), tx, true
	return in.Record(ctx, sessionID, ev)
}

// withTx runs fn in a transaction: the store's own, or the one it was
// bound to (RecordIn).
func (s *Store) withTx(ctx context.Context, what string, fn func(tx *ent.Tx) error) error {
	var err error
	if s.tx != nil {
		err = fn(s.tx)
	} else {
		err = ent.WithTx(ctx, s.db, fn)
	}
	if err != nil {
		return fmt.Errorf("chat store: %s: %w", what, err)
	}
	return nil
}

// remember puts k in m once what was written is committed: at once, or,
// bound to a transaction, when it commits (a rolled back write must be
// written again).
func (s *Store) remember(m *memory, k, v string) {
	if s.tx == nil {
		m.put(k, v)
		return
	}
	s.tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				m.put(k, v)
			}
			return err
		})
	})
}

// memory is a bounded set of strings remembered with a value; its zero
// value is ready. Past maxMemory entries it starts over (the database
// still answers).
type memory struct {
	mu sync.Mutex
	m  map[string]string
}

const maxMemory = 1 << 16

func (m *memory) has(k, v string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	got, ok := m.m[k]
	return ok && got == v
}

func (m *memory) put(k, v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxMemory {
		m.m = map[string]string{}
	}
	m.m[k] = v
}

// notInChat are the types of message that change another message (a
// reaction, an edit, a revoke): the message store keeps the reactions and
// edits sent here as records of their own, but a chat shows what they did
// to their message, never them.
var notInChat = []string{"reaction", "edit", "revoke"}

func inChat(typ string) bool { return !slices.Contains(notInChat, typ) }
