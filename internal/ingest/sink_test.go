package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// env is a sink over a real event log and message store on a fresh
// SQLite file.
type env struct {
	db     *ent.Client
	log    *events.Log
	bus    *flakyBus
	sink   *Sink
	waker  *countingWaker
	stored *kindCounter
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	l := events.NewLog(db, events.LogOptions{})
	t.Cleanup(func() { l.Close() })
	// The bus counts what is stored, as the app wires it: what the sink
	// publishes is counted once, when committed.
	stored := &kindCounter{}
	e := &env{db: db, log: l, bus: &flakyBus{bus: events.NewBus(l, events.BusOptions{Stored: stored})},
		waker: &countingWaker{}, stored: stored}
	e.sink = NewSink(SinkOptions{Bus: e.bus, Messages: messaging.NewStore(db, false),
		MediaPath: func(s, m string) string { return "/api/v1/session/" + s + "/message/" + m + "/media" },
		Waker:     e.waker})
	return e
}

// flakyBus refuses appends while fail is set, as a database that cannot
// commit would.
type flakyBus struct {
	mu   sync.Mutex
	fail bool
	bus  *events.Bus
}

func (b *flakyBus) setFail(v bool) { b.mu.Lock(); b.fail = v; b.mu.Unlock() }

func (b *flakyBus) Publish(ctx context.Context, id string, evs []events.New) ([]events.Envelope, error) {
	b.mu.Lock()
	fail := b.fail
	b.mu.Unlock()
	if fail {
		return nil, errors.New("database is locked")
	}
	return b.bus.Publish(ctx, id, evs)
}

func (b *flakyBus) PublishWith(ctx context.Context, id string, size int, build events.Build) ([]events.Envelope, error) {
	b.mu.Lock()
	fail := b.fail
	b.mu.Unlock()
	if fail {
		return nil, errors.New("database is locked")
	}
	return b.bus.PublishWith(ctx, id, size, build)
}

type countingWaker struct{ n int }

func (w *countingWaker) Wake() { w.n++ }

type kindCounter struct{ kinds []string }

func (k *kindCounter) EventStored(kind string) { k.kinds = append(k.kinds, kind) }

// stored returns the session's log.
func (e *env) storedEvents(t *testing.T) []events.Envelope {
	t.Helper()
	envs, err := e.log.After(context.Background(), "s1", 0, nil, events.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	return envs
}

func kinds(envs []events.Envelope) []events.Kind {
	out := make([]events.Kind, len(envs))
	for i, e := range envs {
		out[i] = e.Kind
	}
	return out
}

// message is a message event as the adapter hands it over.
func message(kind, id, chat string, fromMe bool, pushName string, media *whatsapp.MediaRef) whatsapp.Event {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	sender := chat
	if fromMe {
		sender = "4915550000000@s.whatsapp.net"
	}
	group := len(chat) > 5 && chat[len(chat)-5:] == "@g.us"
	if group && !fromMe {
		sender = "4915550000009@s.whatsapp.net"
	}
	return whatsapp.Event{Kind: kind,
		Data: &payload.Message{ID: id, Chat: chat, Sender: sender, FromMe: fromMe, PushName: payload.Text(pushName),
			Timestamp: payload.At(ts), Type: "text", Text: "hi", IsGroup: group},
		Message: &whatsapp.Message{ID: id, Chat: chat, Sender: sender, FromMe: fromMe, Type: "text", Text: "hi", Timestamp: ts, Media: media}}
}

// TestSinkChatsUpsert: the first message of a chat the store never saw
// comes with chats.upsert before it, in the same commit; later messages of
// the chat do not; the chat's name is the sender's push name in a direct
// chat, unknown otherwise.
func TestSinkChatsUpsert(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const alice, bob, group = "4915550000001@s.whatsapp.net", "4915550000002@s.whatsapp.net", "120363000000000001@g.us"
	steps := []struct {
		name  string
		ev    whatsapp.Event
		kinds []events.Kind
		chat  *payload.Chat // of the chats.upsert
	}{
		{"first from alice", message(whatsapp.KindInboundMessage, "A1", alice, false, "Alice", nil),
			[]events.Kind{events.ChatsUpsert, events.InboundMessageUpsert},
			&payload.Chat{ID: alice, Name: "Alice"}},
		{"second from alice", message(whatsapp.KindInboundMessage, "A2", alice, false, "Alice", nil),
			[]events.Kind{events.InboundMessageUpsert}, nil},
		{"reply to alice", message(whatsapp.KindOutboundMessage, "O1", alice, true, "", nil),
			[]events.Kind{events.OutboundMessageUpsert}, nil},
		{"first to bob", message(whatsapp.KindOutboundMessage, "O2", bob, true, "Me", nil),
			[]events.Kind{events.ChatsUpsert, events.OutboundMessageUpsert},
			&payload.Chat{ID: bob}},
		{"first in a group", message(whatsapp.KindInboundMessage, "G1", group, false, "Carol", nil),
			[]events.Kind{events.ChatsUpsert, events.InboundMessageUpsert},
			&payload.Chat{ID: group}},
		{"a status event", whatsapp.Event{Kind: whatsapp.KindMessagesUpdate, Data: &payload.MessageStatus{ID: "O2", Chat: bob, Status: "read"}},
			[]events.Kind{events.MessagesUpdate}, nil},
	}
	seen := 0
	for _, st := range steps {
		if err := e.sink.Publish(ctx, "s1", st.ev); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		all := e.storedEvents(t)
		got := all[seen:]
		seen = len(all)
		if !slices.Equal(kinds(got), st.kinds) {
			t.Errorf("%s: stored %v, want %v", st.name, kinds(got), st.kinds)
			continue
		}
		if st.chat == nil {
			continue
		}
		if got[0].Seq+1 != got[1].Seq || !got[0].Timestamp.Equal(got[1].Timestamp) {
			t.Errorf("%s: chats.upsert (seq %d) and the message (seq %d) not one commit", st.name, got[0].Seq, got[1].Seq)
		}
		var c payload.Chat
		if err := json.Unmarshal(got[0].Data, &c); err != nil {
			t.Fatal(err)
		}
		want := *st.chat
		want.LastMessageAt = payload.At(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
		if c != want {
			t.Errorf("%s: chat %+v, want %+v", st.name, c, want)
		}
		var raw map[string]any
		_ = json.Unmarshal(got[0].Data, &raw)
		for _, k := range []string{"id", "name", "lastMessageAt"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: chats.upsert data %s lacks %q", st.name, got[0].Data, k)
			}
		}
	}
	if e.waker.n != len(steps) {
		t.Errorf("waker woken %d times, want once per publish (%d)", e.waker.n, len(steps))
	}
	if len(e.stored.kinds) != seen {
		t.Errorf("observer counted %d events, %d stored", len(e.stored.kinds), seen)
	}
}

// TestSinkPublishAll: a send's events handed over together (the first
// message to a chat, then its status) are stored in order in one commit,
// with the chats.upsert the message implies, the message recorded, and the
// dispatcher woken once; a failed store stores none of them.
func TestSinkPublishAll(t *testing.T) {
	var _ whatsapp.BatchPublisher = (*Sink)(nil)
	e := newEnv(t)
	ctx := context.Background()
	const bob = "4915550000002@s.whatsapp.net"
	status := whatsapp.Event{Kind: whatsapp.KindMessagesSend, Data: &payload.MessageStatus{ID: "O1", Chat: bob, Status: "sent"}}

	e.bus.setFail(true)
	if err := e.sink.PublishAll(ctx, "s1", []whatsapp.Event{message(whatsapp.KindOutboundMessage, "O1", bob, true, "Me", nil), status}); err == nil {
		t.Fatal("PublishAll succeeded while the bus fails")
	}
	if got := e.storedEvents(t); len(got) != 0 {
		t.Fatalf("a failed PublishAll stored %v", kinds(got))
	}
	e.bus.setFail(false)
	if err := e.sink.PublishAll(ctx, "s1", []whatsapp.Event{message(whatsapp.KindOutboundMessage, "O1", bob, true, "Me", nil), status}); err != nil {
		t.Fatal(err)
	}
	got := e.storedEvents(t)
	want := []events.Kind{events.ChatsUpsert, events.OutboundMessageUpsert, events.MessagesSend}
	if !slices.Equal(kinds(got), want) {
		t.Fatalf("stored %v, want %v", kinds(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq != got[0].Seq+int64(i) || !got[i].Timestamp.Equal(got[0].Timestamp) {
			t.Errorf("event %d (seq %d, %s) not in the commit of event 0 (seq %d, %s)", i, got[i].Seq, got[i].Timestamp, got[0].Seq, got[0].Timestamp)
		}
	}
	if n := e.db.Message.Query().Where(entmessage.SessionID("s1"), entmessage.MessageID("O1"), entmessage.StatusEQ(entmessage.StatusSent)).CountX(ctx); n != 1 {
		t.Errorf("%d sent records of O1, want 1", n)
	}
	if e.waker.n != 1 {
		t.Errorf("waker woken %d times, want once for the stored batch", e.waker.n)
	}
}

// TestSinkStoreBeforeAck: when the event cannot be stored Publish fails
// (WhatsApp is not acknowledged and sends it again), no observer hears of
// it; the resent message is then stored with its chats.upsert (the failed
// attempt recorded the message, which must not make the chat known), and
// the message store holds one record however often it is sent.
func TestSinkStoreBeforeAck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ev := func() whatsapp.Event {
		ev := message(whatsapp.KindInboundMessage, "M1", "4915550000003@s.whatsapp.net", false, "Dave", nil)
		ev.Key = "inbound-message.upsert/4915550000003@s.whatsapp.net/4915550000003@s.whatsapp.net/M1" // as the adapter keys a message stanza
		return ev
	}
	e.bus.setFail(true)
	if err := e.sink.Publish(ctx, "s1", ev()); err == nil {
		t.Fatal("publish succeeded while the log could not commit")
	}
	if n := len(e.storedEvents(t)); n != 0 {
		t.Fatalf("%d events stored by a failed publish", n)
	}
	if e.waker.n != 0 || len(e.stored.kinds) != 0 {
		t.Errorf("observers told of a failed publish: %d wakes, %v", e.waker.n, e.stored.kinds)
	}
	e.bus.setFail(false)
	for range 2 { // WhatsApp's resend, and a second resend after a lost ack
		if err := e.sink.Publish(ctx, "s1", ev()); err != nil {
			t.Fatal(err)
		}
	}
	got := kinds(e.storedEvents(t))
	// A resend of a stored stanza is the stored events (same ids, so the
	// same webhook-id), not a second pair; the observers hear of them once.
	want := []events.Kind{events.ChatsUpsert, events.InboundMessageUpsert}
	if !slices.Equal(got, want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	if len(e.stored.kinds) != 2 {
		t.Errorf("observer told of %v, want the pair once", e.stored.kinds)
	}
	if n := e.db.Message.Query().Where(entmessage.MessageID("M1")).CountX(ctx); n != 1 {
		t.Errorf("message store holds %d records of M1, want 1", n)
	}
}

// TestSinkMediaURL: a message event with media gets mediaUrl pointing at
// this service's media route and its record keeps the media reference; a
// message without media keeps mediaUrl null.
func TestSinkMediaURL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ref := &whatsapp.MediaRef{DirectPath: "/v/t62/abc_n.enc?ccb=11-4", MediaKey: bytes.Repeat([]byte{1}, 32),
		FileLength: 3, Mimetype: "image/png", MediaType: "image"}
	tests := []struct {
		id    string
		media *whatsapp.MediaRef
		want  payload.Text
	}{
		{"IMG1", ref, "/api/v1/session/s1/message/IMG1/media"},
		{"TXT1", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			ev := message(whatsapp.KindInboundMessage, tt.id, "4915550000004@s.whatsapp.net", false, "", tt.media)
			if err := e.sink.Publish(ctx, "s1", ev); err != nil {
				t.Fatal(err)
			}
			if got := ev.Data.(*payload.Message).MediaURL; got != tt.want {
				t.Errorf("mediaUrl %q, want %q", got, tt.want)
			}
			all := e.storedEvents(t)
			var stored payload.Message
			if err := json.Unmarshal(all[len(all)-1].Data, &stored); err != nil {
				t.Fatal(err)
			}
			if stored.MediaURL != tt.want {
				t.Errorf("stored mediaUrl %q, want %q", stored.MediaURL, tt.want)
			}
			rec := e.db.Message.Query().Where(entmessage.MessageID(tt.id)).OnlyX(ctx)
			var got *whatsapp.MediaRef
			if len(rec.Media) > 0 {
				got = &whatsapp.MediaRef{}
				if err := json.Unmarshal(rec.Media, got); err != nil {
					t.Fatalf("stored media reference: %v", err)
				}
			}
			if (got == nil) != (tt.media == nil) || (got != nil && (got.DirectPath != ref.DirectPath ||
				!bytes.Equal(got.MediaKey, ref.MediaKey) || got.MediaType != "image")) {
				t.Errorf("stored media %+v, want %+v", got, tt.media)
			}
		})
	}
}

// countingStore counts the ChatSeen queries that reach the message store.
type countingStore struct {
	MessageStore
	chatSeen int
}

func (c *countingStore) ChatSeen(ctx context.Context, sessionID, chat, messageID string) (bool, error) {
	c.chatSeen++
	return c.MessageStore.ChatSeen(ctx, sessionID, chat, messageID)
}

// TestSinkChatMemory: once a message of a chat is stored, the chat's next
// messages are known without asking the store; the same message sent
// again still asks (it alone does not make the chat known: without a key it
// comes with chats.upsert again, as before the memory), and a message
// whose event was not stored is not remembered.
func TestSinkChatMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	counting := &countingStore{MessageStore: e.sink.messages}
	e.sink.messages = counting
	const alice = "4915550000001@s.whatsapp.net"
	steps := []struct {
		name     string
		id       string
		fail     bool
		kinds    []events.Kind
		chatSeen int // queries so far
	}{
		{"first, not stored", "A1", true, nil, 1},
		{"first again", "A1", false, []events.Kind{events.ChatsUpsert, events.InboundMessageUpsert}, 2},
		{"first once more", "A1", false, []events.Kind{events.ChatsUpsert, events.InboundMessageUpsert}, 3},
		{"second", "A2", false, []events.Kind{events.InboundMessageUpsert}, 3},
		{"third", "A3", false, []events.Kind{events.InboundMessageUpsert}, 3},
	}
	seen := 0
	for _, st := range steps {
		e.bus.setFail(st.fail)
		err := e.sink.Publish(ctx, "s1", message(whatsapp.KindInboundMessage, st.id, alice, false, "Alice", nil))
		if (err != nil) != st.fail {
			t.Fatalf("%s: %v", st.name, err)
		}
		all := e.storedEvents(t)
		if got := kinds(all[seen:]); !slices.Equal(got, st.kinds) {
			t.Errorf("%s: stored %v, want %v", st.name, got, st.kinds)
		}
		seen = len(all)
		if counting.chatSeen != st.chatSeen {
			t.Errorf("%s: %d ChatSeen queries so far, want %d", st.name, counting.chatSeen, st.chatSeen)
		}
	}
}

// TestWakers: each of several Wakers (the dispatcher, the NATS publisher)
// is woken at every Wake.
func TestWakers(t *testing.T) {
	a, b := &countingWaker{}, &countingWaker{}
	ws := Wakers{a, b}
	ws.Wake()
	ws.Wake()
	if a.n != 2 || b.n != 2 {
		t.Errorf("woken %d and %d times, want 2 each", a.n, b.n)
	}
}

// TestSinkOneTransaction: a message's row in the message store, its
// chat's row in the chat store and its events are written in the event
// log's one transaction (issue 35): stored together in one commit, or,
// when a later part fails, none of them, so the redelivered stanza finds
// nothing half done.
func TestSinkOneTransaction(t *testing.T) {
	ctx := context.Background()
	const alice = "4915550000001@s.whatsapp.net"

	e := newEnv(t)
	e.sink.chatStore = chats.NewStore(e.db, false, nil)
	before := e.log.Stats().Batches
	if err := e.sink.Publish(ctx, "s1", message(whatsapp.KindInboundMessage, "A1", alice, false, "Alice", nil)); err != nil {
		t.Fatal(err)
	}
	if got := kinds(e.storedEvents(t)); !slices.Equal(got, []events.Kind{events.ChatsUpsert, events.InboundMessageUpsert}) {
		t.Errorf("stored %v, want chats.upsert and the message", got)
	}
	if n := e.db.Message.Query().CountX(ctx); n != 1 {
		t.Errorf("%d message rows, want 1", n)
	}
	if c, err := e.db.Chat.Query().Only(ctx); err != nil || c.LastMessageID != "A1" || c.UnreadCount != 1 {
		t.Errorf("chat row %+v (%v), want A1 its last message, one unread", c, err)
	}
	if n := e.log.Stats().Batches - before; n != 1 {
		t.Errorf("%d commits of the event log, want the one that stored it all", n)
	}

	e = newEnv(t)
	e.sink.chatStore = failingChats{}
	if err := e.sink.Publish(ctx, "s1", message(whatsapp.KindInboundMessage, "A1", alice, false, "Alice", nil)); err == nil {
		t.Fatal("Publish succeeded while the chat store refuses the message")
	}
	if got := e.storedEvents(t); len(got) != 0 {
		t.Errorf("stored %v, want nothing", kinds(got))
	}
	if n := e.db.Message.Query().CountX(ctx); n != 0 {
		t.Errorf("%d message rows after the chat store refused the message, want 0 (rolled back with it)", n)
	}
}
