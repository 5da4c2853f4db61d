package messaging

import (
	"context"
	"testing"
	"time"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestRecordMarksMediaDue: a store keeping media marks, in the record of
// a message, the download the keeper owes: a received media at once, one
// the account sent after the grace its upload is kept in; not a message
// without media, a kind not kept, view-once media, one past the size
// bound or one from a history sync. The phone's new location of media not
// kept makes it due again; a store keeping nothing marks nothing.
func TestRecordMarksMediaDue(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	keeping := NewStore(db, false).KeepMedia(&mediakeep.Options{Kinds: []string{mediakeep.Image, mediakeep.Audio}, MaxSize: 1000})
	const chat = "491701234567@s.whatsapp.net"
	ref := func(size uint64) *whatsapp.MediaRef {
		return &whatsapp.MediaRef{DirectPath: "/v/x", MediaKey: []byte("k"), FileLength: size, MediaType: "image"}
	}
	before := time.Now().UTC().Add(-time.Second)
	for _, tt := range []struct {
		id, typ  string
		media    *whatsapp.MediaRef
		fromMe   bool
		viewOnce bool
		history  bool
		store    *Store
		due      string // "now", "later" or "" (none)
	}{
		{id: "IMG", typ: "image", media: ref(10), store: keeping, due: "now"},
		{id: "VOICE", typ: "voice", media: ref(10), store: keeping, due: "now"},
		{id: "MINE", typ: "image", media: ref(10), fromMe: true, store: keeping, due: "later"},
		{id: "TEXT", typ: "text", store: keeping},
		{id: "VIDEO", typ: "video", media: ref(10), store: keeping},
		{id: "ONCE", typ: "image", media: ref(10), viewOnce: true, store: keeping},
		{id: "BIG", typ: "image", media: ref(1001), store: keeping},
		{id: "OLD", typ: "image", media: ref(10), history: true, store: keeping},
		{id: "NOKEEP", typ: "image", media: ref(10), store: NewStore(db, false)},
	} {
		m := &whatsapp.Message{ID: tt.id, Chat: chat, Sender: chat, FromMe: tt.fromMe, Type: tt.typ, Media: tt.media, ViewOnce: tt.viewOnce, Timestamp: before}
		ev := &whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: m}
		if tt.history {
			ev = &whatsapp.Event{Kind: whatsapp.KindHistorySet, History: []whatsapp.Message{*m}}
		}
		if err := tt.store.Record(ctx, "s1", ev); err != nil {
			t.Fatalf("record %s: %v", tt.id, err)
		}
		got := db.Message.Query().Where(entmessage.MessageID(tt.id)).OnlyX(ctx).MediaDue
		switch {
		case tt.due == "" && got != nil:
			t.Errorf("%s: due %v, want none", tt.id, got)
		case tt.due == "now" && (got == nil || got.Before(before) || got.After(time.Now().Add(time.Second))):
			t.Errorf("%s: due %v, want now", tt.id, got)
		case tt.due == "later" && (got == nil || !got.After(time.Now().Add(10*time.Second))):
			t.Errorf("%s: due %v, want after the grace of its upload", tt.id, got)
		}
	}
	// The phone uploaded the media of OLD again (the route asked): due now.
	old := &whatsapp.Message{ID: "OLD", Chat: chat, Sender: chat, Type: "image", Media: ref(10)}
	if err := keeping.Record(ctx, "s1", &whatsapp.Event{Kind: whatsapp.KindMediaUpdate, Message: old}); err != nil {
		t.Fatal(err)
	}
	if got := db.Message.Query().Where(entmessage.MessageID("OLD")).OnlyX(ctx).MediaDue; got == nil {
		t.Error("OLD after the phone's new upload: not due")
	}
}
