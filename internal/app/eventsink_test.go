package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent/enttest"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestEventSinkMediaURL: a message event with media gets mediaUrl pointing
// at this service's media route and its record keeps the media reference;
// a message without media keeps mediaUrl null.
func TestEventSinkMediaURL(t *testing.T) {
	ctx := context.Background()
	db := enttest.Open(t, "sqlite3", "file:"+filepath.Join(t.TempDir(), "t.db")+"?_foreign_keys=on")
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	sink := &eventSink{messages: messaging.New(messaging.Options{DB: db}), log: slog.New(slog.DiscardHandler)}

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
			data := &payload.Message{ID: tt.id}
			ev := whatsapp.Event{Kind: whatsapp.KindInboundMessage, Data: data,
				Message: &whatsapp.Message{ID: tt.id, Chat: "1@s.whatsapp.net", Sender: "1@s.whatsapp.net", Type: "image", Timestamp: time.Now(), Media: tt.media}}
			if err := sink.Publish(ctx, "s1", ev); err != nil {
				t.Fatal(err)
			}
			if data.MediaURL != tt.want {
				t.Errorf("mediaUrl %q, want %q", data.MediaURL, tt.want)
			}
			rec := db.Message.Query().Where(entmessage.MessageID(tt.id)).OnlyX(ctx)
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
