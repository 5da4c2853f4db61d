package sessions

import (
	"context"
	"testing"

	"github.com/wagraph/wagraph/whatsapp"
)

// TestStatusStoreNUL: a push name or reason (which may quote WhatsApp) with
// U+0000 is saved with the NUL replaced, and the saves after it land.
func TestStatusStoreNUL(t *testing.T) {
	ctx := context.Background()
	s := NewStatusStore(oneSession(t))
	rec := whatsapp.StatusRecord{Status: whatsapp.StatusConnected, JID: "4915550000000:3@s.whatsapp.net", PushName: "Ada\x00Lovelace",
		Reason: "stream error 5\x0015: reconnecting"}
	if err := s.SaveStatus(ctx, "s1", rec); err != nil {
		t.Fatalf("save with a NUL push name: %v", err)
	}
	rec.Status = whatsapp.StatusDisconnected
	if err := s.SaveStatus(ctx, "s1", rec); err != nil {
		t.Fatalf("the save after: %v", err)
	}
	got, _, err := s.LoadStatus(ctx, "s1")
	if err != nil || got.Status != whatsapp.StatusDisconnected || got.PushName != "Ada\uFFFDLovelace" ||
		got.Reason != "stream error 5\uFFFD15: reconnecting" {
		t.Errorf("loaded %+v, %v; want DISCONNECTED with the NULs of the push name and reason replaced", got, err)
	}
}
