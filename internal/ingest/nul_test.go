package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestSinkStoresNUL: an event from WhatsApp with U+0000 in its key, its
// data and its message record is stored (PostgreSQL refuses NUL in text
// and jsonb) with every NUL replaced by U+FFFD, alike on both backends; the
// same event sent again is the one already stored.
func TestSinkStoresNUL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const chat = "4915550000001@s.whatsapp.net"
	ev := message(whatsapp.KindInboundMessage, "ID\x00", chat, false, "Ada\x00", nil)
	ev.Key = "key\x00"
	ev.Data.(*payload.Message).Text = "a\x00b"
	ev.Data.(*payload.Message).Caption = "c\x00"
	ev.Message.Text, ev.Message.Caption = "a\x00b", "c\x00"
	for range 2 { // the second time is WhatsApp's redelivery
		if err := e.sink.Publish(ctx, "s1", ev); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	envs := e.storedEvents(t)
	if got := kinds(envs); len(got) != 2 || got[0] != "chats.upsert" || got[1] != whatsapp.KindInboundMessage {
		t.Fatalf("stored %v, want chats.upsert and the message once", got)
	}
	for _, env := range envs {
		if bytes.Contains(env.Data, []byte(`\u0000`)) {
			t.Errorf("%s stored with a NUL: %s", env.Kind, env.Data)
		}
	}
	var d struct{ ID, Text, Caption, PushName string }
	if err := json.Unmarshal(envs[1].Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != "ID\uFFFD" || d.Text != "a\uFFFDb" || d.Caption != "c\uFFFD" || d.PushName != "Ada\uFFFD" {
		t.Errorf("message data %+v, want the NULs replaced by U+FFFD", d)
	}
	rows := e.db.Message.Query().Where(entmessage.SessionID("s1")).AllX(ctx)
	if len(rows) != 1 || rows[0].MessageID != "ID\uFFFD" || rows[0].Text != "a\uFFFDb" || rows[0].Caption != "c\uFFFD" {
		t.Errorf("message rows %+v, want one with the NULs replaced", rows)
	}
}
