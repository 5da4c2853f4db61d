// Package ingest is the path of a session's events into the store: the
// Sink every event of the session manager (and of the messaging service)
// passes through, in order, before WhatsApp's stanza is acknowledged — the
// message store, the chat store, the events it implies (chats.upsert), the
// bus in one transaction, then what must learn of the commit.
package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/textrule"
	"github.com/wagraph/wagraph/whatsapp"
)

// Bus stores a session's events and fans them out after the commit
// (events.Bus).
type Bus interface {
	Publish(ctx context.Context, sessionID string, evs []events.New) ([]events.Envelope, error)
}

// MessageStore is the message store (messaging.Store): what an event says
// about messages is recorded there before the event is stored.
type MessageStore interface {
	// Record keeps the message or status an event carries; recording the
	// same event twice changes nothing. It may turn ev into the event
	// that says what was refused (a reaction from another chat becomes
	// messages.update reaction-refused): ev is stored as Record leaves it.
	Record(ctx context.Context, sessionID string, ev *whatsapp.Event) error
	// ChatSeen reports whether the store holds a message of chat other
	// than messageID.
	ChatSeen(ctx context.Context, sessionID, chat, messageID string) (bool, error)
}

// ChatStore is the chat store (chats.Store): what an event says about the
// session's chats, contacts and identities is kept there once the message
// store has recorded it, before the event is stored.
type ChatStore interface {
	Record(ctx context.Context, sessionID string, ev whatsapp.Event) error
}

// TxBus is a Bus that writes what an event implies in the transaction that
// stores it (events.Bus.PublishWith): the event log's batch, so the
// writes of a batch of events share one commit.
type TxBus interface {
	PublishWith(ctx context.Context, sessionID string, size int, build events.Build) ([]events.Envelope, error)
}

// TxMessageStore is a MessageStore that records some events (RecordsIn)
// in the transaction that stores them.
type TxMessageStore interface {
	RecordsIn(ev whatsapp.Event) bool
	RecordIn(ctx context.Context, tx *ent.Tx, sessionID string, ev *whatsapp.Event) error
}

// TxChatStore is a ChatStore that records in the transaction that stores
// the event.
type TxChatStore interface {
	RecordIn(ctx context.Context, tx *ent.Tx, sessionID string, ev whatsapp.Event) error
}

// Waker learns that events were committed (the webhook dispatcher: new
// delivery rows may be due).
type Waker interface{ Wake() }

// Wakers are several Wakers woken in turn (the dispatcher, the NATS
// publisher); each must take a Wake on a nil receiver when it may be nil.
type Wakers []Waker

// Wake wakes each one.
func (ws Wakers) Wake() {
	for _, w := range ws {
		w.Wake()
	}
}

// Follower learns of the events a commit stored for the first time (the
// messaging service's automations: auto mark read, auto reject calls). It
// is called after the commit, on the session's event path: it must not
// block.
type Follower interface {
	Follow(sessionID string, evs []whatsapp.Event)
}

// SinkOptions are the parts a Sink hands events to. Bus and Messages are
// required, the rest may be nil.
type SinkOptions struct {
	Bus      Bus
	Messages MessageStore
	// Chats, when set, keeps the chat store from the events.
	Chats ChatStore
	// MediaPath is this service's media route of a message (mediaUrl);
	// nil leaves mediaUrl as the adapter set it.
	MediaPath func(sessionID, messageID string) string
	Waker     Waker
	// Follower, when set, is handed the events each commit stored anew.
	Follower Follower
	Logger   *slog.Logger
}

// Sink is the session manager's Publisher (and the messaging service's):
// every event of a session passes through it, in order, before WhatsApp's
// stanza is acknowledged. It completes the event (mediaUrl), records it in
// the message store and then the chat store, derives the events it implies (chats.upsert for the
// first message of a chat), stores them all in one transaction through the
// bus, and only then wakes the dispatcher. An error means the event is not
// stored: the adapter does not acknowledge it and WhatsApp sends it again,
// which every step here tolerates (the store keeps the first record; a
// chat is new until a message other than the resent one is stored).
type Sink struct {
	bus       Bus
	messages  MessageStore
	chatStore ChatStore
	mediaPath func(sessionID, messageID string) string
	waker     Waker
	follower  Follower
	log       *slog.Logger
	chats     chatMemory
}

// NewSink returns a sink over opts.
func NewSink(opts SinkOptions) *Sink {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{bus: opts.Bus, messages: opts.Messages, chatStore: opts.Chats, mediaPath: opts.MediaPath,
		waker: opts.Waker, follower: opts.Follower, log: opts.Logger}
}

// Publish stores ev of a session with what it implies, and returns once it
// is committed (whatsapp.Publisher).
func (s *Sink) Publish(ctx context.Context, sessionID string, ev whatsapp.Event) error {
	return s.PublishAll(ctx, sessionID, []whatsapp.Event{ev})
}

// PublishAll is Publish of several events of a session, stored in order in
// one transaction (whatsapp.BatchPublisher): a send's two events cost one
// commit. Each event is recorded in the message store before the next one
// is looked at, as if they came one by one.
func (s *Sink) PublishAll(ctx context.Context, sessionID string, evs []whatsapp.Event) error {
	evs = storable(evs)
	if len(evs) == 1 {
		if done, err := s.publishIn(ctx, sessionID, evs[0]); done {
			return err
		}
	}
	var news []events.New
	own := make([]int, len(evs)) // where each event's own entry is in news
	for i, ev := range evs {
		n, err := s.prepare(ctx, sessionID, ev)
		if err != nil {
			return err
		}
		news = append(news, n...)
		own[i] = len(news) - 1
	}
	envs, err := s.bus.Publish(ctx, sessionID, news)
	if err != nil {
		return fmt.Errorf("store %s of session %s: %w", kindsOf(evs), sessionID, err)
	}
	s.committed(ctx, sessionID, evs, own, envs)
	return nil
}

// publishIn stores a message event as PublishAll does, with its message
// and chat store rows written in the transaction that stores the event
// (TxBus, TxMessageStore, TxChatStore): the event log's batch, one commit
// for all the sessions' messages of the batch, where each message's
// records were a transaction each before. done is false when ev is not
// one the stores record so (or they cannot): PublishAll then stores it
// the other way.
func (s *Sink) publishIn(ctx context.Context, sessionID string, ev whatsapp.Event) (done bool, err error) {
	bus, ok := s.bus.(TxBus)
	if !ok {
		return false, nil
	}
	msgs, ok := s.messages.(TxMessageStore)
	if !ok || !msgs.RecordsIn(ev) {
		return false, nil
	}
	var chats TxChatStore
	if s.chatStore != nil {
		if chats, ok = s.chatStore.(TxChatStore); !ok {
			return false, nil
		}
	}
	s.complete(sessionID, ev)
	// What can be done before the transaction is: the reads, and the
	// encoding (recording a message does not change its event).
	news, err := s.chatUpsert(ctx, sessionID, ev)
	if err != nil {
		return true, err
	}
	data, err := encodeData(ev.Data)
	if err != nil {
		return true, fmt.Errorf("encode %s of session %s: %w", ev.Kind, sessionID, err)
	}
	news = append(news, events.New{Kind: events.Kind(ev.Kind), Data: data, Key: ev.Key})
	envs, err := bus.PublishWith(ctx, sessionID, len(news), func(ctx context.Context, tx *ent.Tx) ([]events.New, error) {
		rec := ev // RecordIn may not change what is stored, but keeps its own copy
		if err := msgs.RecordIn(ctx, tx, sessionID, &rec); err != nil {
			return nil, err
		}
		if chats != nil {
			if err := chats.RecordIn(ctx, tx, sessionID, rec); err != nil {
				return nil, err
			}
		}
		return news, nil
	})
	if err != nil {
		return true, fmt.Errorf("store %s of session %s: %w", ev.Kind, sessionID, err)
	}
	s.committed(ctx, sessionID, []whatsapp.Event{ev}, []int{len(news) - 1}, envs)
	return true, nil
}

// committed is what follows the commit of evs (envs, one per entry of
// what was stored, own[i] being event i's): the chat memory, the
// dispatcher's wake-up, the follower, the log.
func (s *Sink) committed(ctx context.Context, sessionID string, evs []whatsapp.Event, own []int, envs []events.Envelope) {
	for _, ev := range evs {
		if isChatMessage(ev) {
			s.chats.remember(sessionID, ev.Message.Chat, ev.Message.ID)
		}
	}
	if s.waker != nil {
		s.waker.Wake()
	}
	if s.follower != nil {
		s.follow(sessionID, evs, own, envs)
	}
	for _, e := range envs {
		if e.Existing {
			s.log.DebugContext(ctx, "event already stored", "session_id", sessionID, "kind", string(e.Kind), "seq", e.Seq, "event_id", e.ID)
			continue
		}
		s.log.DebugContext(ctx, "event stored", "session_id", sessionID, "kind", string(e.Kind), "seq", e.Seq, "event_id", e.ID)
	}
}

// follow hands the follower the events of evs that envs (one per entry
// of news, own[i] being event i's) did not find stored already: a stanza
// WhatsApp sent again is not acted on twice.
func (s *Sink) follow(sessionID string, evs []whatsapp.Event, own []int, envs []events.Envelope) {
	fresh := make([]whatsapp.Event, 0, len(evs))
	for i, ev := range evs {
		if own[i] < len(envs) && envs[own[i]].Existing {
			continue
		}
		fresh = append(fresh, ev)
	}
	if len(fresh) > 0 {
		s.follower.Follow(sessionID, fresh)
	}
}

// prepare completes ev, records it in the message store and the chat
// store, and returns the events to store for it: the chats.upsert it
// implies, if any, then ev.
func (s *Sink) prepare(ctx context.Context, sessionID string, ev whatsapp.Event) ([]events.New, error) {
	s.complete(sessionID, ev)
	var evs []events.New
	if s.messages != nil {
		var err error
		if evs, err = s.chatUpsert(ctx, sessionID, ev); err != nil {
			return nil, err
		}
		if err := s.messages.Record(ctx, sessionID, &ev); err != nil {
			return nil, err
		}
	}
	if s.chatStore != nil {
		if err := s.chatStore.Record(ctx, sessionID, ev); err != nil {
			return nil, err
		}
	}
	data, err := encodeData(ev.Data)
	if err != nil {
		return nil, fmt.Errorf("encode %s of session %s: %w", ev.Kind, sessionID, err)
	}
	return append(evs, events.New{Kind: events.Kind(ev.Kind), Data: data, Key: ev.Key}), nil
}

// complete sets the mediaUrl of ev's data (in place).
func (s *Sink) complete(sessionID string, ev whatsapp.Event) {
	if ev.Message != nil && ev.Message.Media != nil && s.mediaPath != nil {
		// events.md: mediaUrl is this service's media route, never WhatsApp's.
		switch d := ev.Data.(type) {
		case *payload.Message:
			d.MediaURL = payload.Text(s.mediaPath(sessionID, ev.Message.ID))
		case *payload.MediaUpdate: // the phone uploaded it again: the route serves it
			d.MediaURL = payload.Text(s.mediaPath(sessionID, ev.Message.ID))
		}
	}
	if d, ok := ev.Data.(*payload.HistorySet); ok && s.mediaPath != nil && len(ev.History) == len(d.Messages) {
		// A history sync's messages are stored like the others (the
		// records in ev.History, one per message of the data): the media
		// route serves theirs too.
		for i := range d.Messages {
			if ev.History[i].Media != nil {
				d.Messages[i].MediaURL = payload.Text(s.mediaPath(sessionID, d.Messages[i].ID))
			}
		}
	}
}

// chatUpsert returns the chats.upsert event ev implies (the first message
// of a chat), if any.
func (s *Sink) chatUpsert(ctx context.Context, sessionID string, ev whatsapp.Event) ([]events.New, error) {
	chat, err := s.newChat(ctx, sessionID, ev)
	if err != nil || chat == nil {
		return nil, err
	}
	b, err := json.Marshal(chat)
	if err != nil {
		return nil, fmt.Errorf("encode chats.upsert of session %s: %w", sessionID, err)
	}
	// Keyed by the message that made the chat known: the message sent
	// again is the same pair of events.
	key := ""
	if ev.Key != "" {
		key = string(events.ChatsUpsert) + "/" + ev.Key
	}
	return []events.New{{Kind: events.ChatsUpsert, Data: b, Key: key}}, nil
}

// storable is evs with every NUL in their text replaced (textrule): what
// WhatsApp sends is stored alike on both backends, where PostgreSQL would
// refuse the event, the message record and every redelivery of it. The
// records are copied; the data is cleaned in place, as the adapter hands
// it over to be stored.
func storable(evs []whatsapp.Event) []whatsapp.Event {
	out := make([]whatsapp.Event, len(evs))
	for i, ev := range evs {
		ev.Key = textrule.Clean(ev.Key)
		textrule.CleanAll(ev.Data)
		ev.Message = cleanRecord(ev.Message)
		if len(ev.History) > 0 {
			h := make([]whatsapp.Message, len(ev.History))
			for j := range ev.History {
				h[j] = *cleanRecord(&ev.History[j])
			}
			ev.History = h
		}
		out[i] = ev
	}
	return out
}

// cleanRecord is a copy of the message record m with its text cleaned
// (textrule), the adapter's left as it was; nil for nil.
func cleanRecord(m *whatsapp.Message) *whatsapp.Message {
	if m == nil {
		return nil
	}
	c := *m
	if c.Media != nil {
		media := *c.Media
		c.Media = &media
	}
	textrule.CleanAll(&c)
	return &c
}

// kindsOf names the kinds of evs, for errors.
func kindsOf(evs []whatsapp.Event) string {
	kinds := make([]string, len(evs))
	for i, ev := range evs {
		kinds[i] = ev.Kind
	}
	return strings.Join(kinds, ", ")
}

// newChat returns the chats.upsert data of a message in a chat the store
// has no other message of (the first one; also when it is sent again),
// or nil.
func (s *Sink) newChat(ctx context.Context, sessionID string, ev whatsapp.Event) (*payload.Chat, error) {
	if !isChatMessage(ev) {
		return nil, nil
	}
	m := ev.Message
	if id, ok := s.chats.lookup(sessionID, m.Chat); ok && id != m.ID {
		return nil, nil // the store holds another message of the chat
	}
	seen, err := s.messages.ChatSeen(ctx, sessionID, m.Chat, m.ID)
	if err != nil {
		return nil, err
	}
	if seen {
		return nil, nil
	}
	c := &payload.Chat{ID: m.Chat, LastMessageAt: payload.At(m.Timestamp)}
	if d, ok := ev.Data.(*payload.Message); ok {
		if !m.FromMe && !d.IsGroup {
			// In a direct chat the sender is the chat: its push name names it.
			c.Name = d.PushName
		}
	}
	return c, nil
}

// isChatMessage is whether ev is a message the store records as a message
// of its chat: a media update is about a message the store has, and a
// revoke is not stored as a message of its chat.
func isChatMessage(ev whatsapp.Event) bool {
	if ev.Kind != whatsapp.KindInboundMessage && ev.Kind != whatsapp.KindOutboundMessage {
		return false
	}
	m := ev.Message
	return m != nil && m.Chat != "" && m.Type != "revoke"
}

// encodeData is an event's data as stored: a JSON object ({} for none).
func encodeData(d payload.Data) (json.RawMessage, error) {
	if d == nil {
		return nil, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" { // a nil pointer of a payload type
		return nil, nil
	}
	// What a type's own MarshalJSON writes from unexported fields is
	// beyond CleanAll: the encoded form is cleaned too.
	return textrule.CleanJSON(b), nil
}
