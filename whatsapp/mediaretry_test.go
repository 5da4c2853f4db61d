package whatsapp

import (
	"bytes"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestMediaRetry: media the media host deleted downloads again after the
// phone uploaded it anew at the session's request: messages.media-update
// with the record's new location. A phone that no longer has the media
// answers with an error.
func TestMediaRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	pic := tinyPNG(t)
	received := func() *Message {
		t.Helper()
		id, err := e.net.SendImage(peer, phone, pic, "image/png", "")
		if err != nil {
			t.Fatal(err)
		}
		ev, _ := e.event("s1", KindInboundMessage, id)
		if ev.Message == nil || ev.Message.Media == nil {
			t.Fatalf("image without media: %+v", ev)
		}
		return ev.Message
	}

	t.Run("uploaded again", func(t *testing.T) {
		msg := received()
		if err := e.net.ExpireMedia(msg.ID, false); err != nil {
			t.Fatal(err)
		}
		_, err := m.Download(ctx, "s1", *msg.Media)
		wantFault(t, err, fault.NotFound, "no longer")
		if err := m.RequestMediaRetry(ctx, "s1", *msg); err != nil {
			t.Fatal(err)
		}
		ev, _ := e.event("s1", KindMediaUpdate, msg.ID)
		wantData(t, "messages.media-update", ev.Data, map[string]any{"chat": phoneJID(peer).String(), "fromMe": false, "error": nil})
		rec := ev.Message
		if rec == nil || rec.Media == nil || rec.ID != msg.ID || rec.Chat != msg.Chat || rec.Media.DirectPath == msg.Media.DirectPath {
			t.Fatalf("record %+v, want %s with a new direct path", rec, msg.ID)
		}
		got, err := m.Download(ctx, "s1", *rec.Media)
		if err != nil || !bytes.Equal(got, pic) {
			t.Errorf("download after the retry: %d bytes, %v", len(got), err)
		}
	})
	t.Run("gone from the phone", func(t *testing.T) {
		msg := received()
		if err := e.net.ExpireMedia(msg.ID, true); err != nil {
			t.Fatal(err)
		}
		if err := m.RequestMediaRetry(ctx, "s1", *msg); err != nil {
			t.Fatal(err)
		}
		ev, _ := e.event("s1", KindMediaUpdate, msg.ID)
		wantData(t, "messages.media-update", ev.Data, map[string]any{"error": "the phone no longer has the media", "mediaUrl": nil})
		if ev.Message != nil {
			t.Errorf("a failed retry carries a record: %+v", ev.Message)
		}
	})
	t.Run("no media", func(t *testing.T) {
		wantFault(t, m.RequestMediaRetry(ctx, "s1", Message{ID: "X", Chat: phoneJID(peer).String(), Sender: phoneJID(peer).String()}), fault.NotFound, "no media")
	})
	e.settle(st)
}
