package messaging

import (
	"bytes"
	"context"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestRecordOwnMessage: recording a message sent here inserts it as sent;
// a scheduled record of it becomes sent with the send's timestamp and
// media; any other record of the id stays as it was (the first record
// wins), and a received message never changes a record.
func TestRecordOwnMessage(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	s := NewStore(db, false)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	const chat = "491701234567@s.whatsapp.net"
	reserve := func(id string) {
		db.Message.Create().SetSessionID("s1").SetMessageID(id).SetChat(chat).SetSender("me").SetFromMe(true).
			SetType("image").SetStatus(entmessage.StatusScheduled).SetTimestamp(t0).ExecX(ctx)
	}
	reserve("SCHED")
	db.Message.Create().SetSessionID("s1").SetMessageID("OLD").SetChat(chat).SetSender("me").SetFromMe(true).
		SetType("text").SetText("first").SetStatus(entmessage.StatusSent).SetTimestamp(t0).ExecX(ctx)
	media := &whatsapp.MediaRef{DirectPath: "/v/t62/abc", Mimetype: "image/png"}
	for _, m := range []*whatsapp.Message{
		{ID: "NEW", Chat: chat, Sender: "me", FromMe: true, Type: "text", Text: "hi", Timestamp: t1},
		{ID: "SCHED", Chat: chat, Sender: "me", FromMe: true, Type: "image", Timestamp: t1, Media: media},
		{ID: "OLD", Chat: chat, Sender: "me", FromMe: true, Type: "text", Text: "again", Timestamp: t1},
		{ID: "NEW", Chat: chat, Sender: chat, FromMe: false, Type: "text", Text: "echo", Timestamp: t0},
	} {
		if err := s.Record(ctx, "s1", &whatsapp.Event{Kind: whatsapp.KindOutboundMessage, Message: m}); err != nil {
			t.Fatalf("record %s: %v", m.ID, err)
		}
	}
	get := func(id string) *ent.Message {
		return db.Message.Query().Where(entmessage.SessionID("s1"), entmessage.MessageID(id)).OnlyX(ctx)
	}
	if m := get("NEW"); m.Status != entmessage.StatusSent || m.Text != "hi" || !m.Timestamp.Equal(t1) || !m.FromMe {
		t.Errorf("NEW: %s %q at %s (fromMe %v), want the first record: sent \"hi\" at %s", m.Status, m.Text, m.Timestamp, m.FromMe, t1)
	}
	m := get("SCHED")
	want, err := encodeMediaRef(media)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != entmessage.StatusSent || !m.Timestamp.Equal(t1) || !bytes.Equal(m.Media, want) {
		t.Errorf("SCHED: %s at %s with media %s; want sent at %s with %s", m.Status, m.Timestamp, m.Media, t1, want)
	}
	if m := get("OLD"); m.Status != entmessage.StatusSent || m.Text != "first" || !m.Timestamp.Equal(t0) {
		t.Errorf("OLD: %s %q at %s, want unchanged (sent \"first\" at %s)", m.Status, m.Text, m.Timestamp, t0)
	}
}

// TestRecordsIn: a message sent or received is recorded in the event's
// transaction (the event log's batch) on SQLite, where the database's
// writes run one at a time anyway; on PostgreSQL (concurrent writes) and
// for every other event the store's own transactions keep it.
func TestRecordsIn(t *testing.T) {
	msg := &whatsapp.Message{ID: "M1", Chat: "4915550000001@s.whatsapp.net", Type: "text"}
	for _, tt := range []struct {
		name       string
		concurrent bool
		ev         whatsapp.Event
		want       bool
	}{
		{"received, SQLite", false, whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: msg}, true},
		{"sent, SQLite", false, whatsapp.Event{Kind: whatsapp.KindOutboundMessage, Message: msg}, true},
		{"received, PostgreSQL", true, whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: msg}, false},
		{"a media update", false, whatsapp.Event{Kind: whatsapp.KindMediaUpdate, Message: msg}, false},
		{"a reaction", false, whatsapp.Event{Kind: whatsapp.KindMessagesReaction}, false},
		{"no message record", false, whatsapp.Event{Kind: whatsapp.KindInboundMessage}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewStore(nil, tt.concurrent).RecordsIn(tt.ev); got != tt.want {
				t.Errorf("RecordsIn = %v, want %v", got, tt.want)
			}
		})
	}
}
