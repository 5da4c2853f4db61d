package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestSinkChatStore: the sink keeps the chat store from every event,
// after the message store and before the event is stored; a message whose
// commit failed and that WhatsApp sends again, twice, is one unread
// message of its chat. A chat store that fails fails the publish: nothing
// is stored, so WhatsApp sends the stanza again.
func TestSinkChatStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	store := chats.NewStore(e.db, false, nil)
	e.sink = NewSink(SinkOptions{Bus: e.bus, Messages: messaging.NewStore(e.db, false), Chats: store})
	const chat = "4915550000007@s.whatsapp.net"
	ev := func() whatsapp.Event {
		ev := message(whatsapp.KindInboundMessage, "M7", chat, false, "Erin", nil)
		ev.Key = "inbound-message.upsert/" + chat + "/" + chat + "/M7"
		return ev
	}
	e.bus.setFail(true)
	if err := e.sink.Publish(ctx, "s1", ev()); err == nil {
		t.Fatal("publish succeeded while the log could not commit")
	}
	e.bus.setFail(false)
	for range 2 {
		if err := e.sink.Publish(ctx, "s1", ev()); err != nil {
			t.Fatal(err)
		}
	}
	c, err := store.Chat(ctx, "s1", mustParse(t, chat))
	if err != nil || c == nil {
		t.Fatalf("chat: %v %v", c, err)
	}
	if c.Row.UnreadCount != 1 || c.LastMessage == nil || c.LastMessage.MessageID != "M7" || c.Name != "Erin" {
		t.Errorf("chat: unread %d, last %v, name %q; want 1 unread, M7, Erin", c.Row.UnreadCount, c.LastMessage, c.Name)
	}

	failing := NewSink(SinkOptions{Bus: e.bus, Messages: messaging.NewStore(e.db, false), Chats: failingChats{}})
	before := len(e.storedEvents(t))
	if err := failing.Publish(ctx, "s1", message(whatsapp.KindInboundMessage, "M8", chat, false, "", nil)); err == nil {
		t.Fatal("publish succeeded while the chat store failed")
	}
	if n := len(e.storedEvents(t)); n != before {
		t.Errorf("%d events stored by a publish whose chat store failed", n-before)
	}
}

type failingChats struct{}

func (failingChats) Record(context.Context, string, whatsapp.Event) error {
	return errors.New("the chat store is unreachable")
}

func (failingChats) RecordIn(context.Context, *ent.Tx, string, whatsapp.Event) error {
	return errors.New("the chat store is unreachable")
}

func mustParse(t *testing.T, s string) whatsapp.JID {
	t.Helper()
	j, err := whatsapp.ParseJID(s)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestSinkHistory: a history sync's messages are stored in the message
// store with NULs replaced (PostgreSQL refuses them), and one with media
// gets this service's media route as mediaUrl in the event.
func TestSinkHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const chat = "4915550000009@s.whatsapp.net"
	at := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	ev := whatsapp.Event{Kind: whatsapp.KindHistorySet,
		Data: &payload.HistorySet{SyncType: "ON_DEMAND", Part: 1, Parts: 1, Messages: []payload.Message{
			{ID: "H1", Chat: chat, Sender: chat, Type: "text", Text: "a\x00b", Timestamp: payload.At(at)},
			{ID: "H2", Chat: chat, Sender: chat, Type: "image", Timestamp: payload.At(at)},
		}},
		History: []whatsapp.Message{
			{ID: "H1", Chat: chat, Sender: chat, Type: "text", Text: "a\x00b", Timestamp: at},
			{ID: "H2", Chat: chat, Sender: chat, Type: "image", Timestamp: at, Media: &whatsapp.MediaRef{DirectPath: "/v/t62/h2", Mimetype: "image/jpeg"}},
		}}
	if err := e.sink.Publish(ctx, "s1", ev); err != nil {
		t.Fatal(err)
	}
	rows := e.db.Message.Query().Where(entmessage.SessionID("s1")).Order(ent.Asc(entmessage.FieldMessageID)).AllX(ctx)
	if len(rows) != 2 || rows[0].Text != "a\uFFFDb" || len(rows[1].Media) == 0 {
		t.Fatalf("stored %v, want H1 with its NUL replaced and H2 with its media", rows)
	}
	var d struct {
		Messages []struct{ ID, MediaURL string }
	}
	envs := e.storedEvents(t)
	if err := json.Unmarshal(envs[len(envs)-1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Messages) != 2 || d.Messages[0].MediaURL != "" || d.Messages[1].MediaURL != "/api/v1/session/s1/message/H2/media" {
		t.Errorf("the event's messages %+v, want H2's media route", d.Messages)
	}
}
