package sessions

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestStatusStore: a status record saved is loaded back, its reason
// included; a session that
// does not exist is not found; Linked lists the sessions with a device.
func TestStatusStore(t *testing.T) {
	ctx := context.Background()
	s := NewStatusStore(oneSession(t))
	if _, found, err := s.LoadStatus(ctx, "nope"); found || err != nil {
		t.Errorf("missing session: found %v, %v", found, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := whatsapp.StatusRecord{Status: whatsapp.StatusConnecting, Reason: "the connection was lost: reconnecting",
		JID: "4915550000000:3@s.whatsapp.net", PushName: "Me", ConnectedAt: at}
	if err := s.SaveStatus(ctx, "s1", rec); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.LoadStatus(ctx, "s1")
	if err != nil || !found || got.Status != rec.Status || got.Reason != rec.Reason || got.JID != rec.JID || got.PushName != rec.PushName || !got.ConnectedAt.Equal(at) {
		t.Errorf("loaded %+v (%v, %v), want %+v", got, found, err, rec)
	}
	// A status without a reason clears the one saved before.
	rec.Status, rec.Reason = whatsapp.StatusConnected, ""
	if err := s.SaveStatus(ctx, "s1", rec); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.LoadStatus(ctx, "s1"); err != nil || got.Status != rec.Status || got.Reason != "" {
		t.Errorf("loaded %+v (%v), want CONNECTED without a reason", got, err)
	}
	if ids, err := s.Linked(ctx); err != nil || !slices.Equal(ids, []string{"s1"}) {
		t.Errorf("linked %v, %v", ids, err)
	}
	if err := s.SaveStatus(ctx, "s1", whatsapp.StatusRecord{Status: whatsapp.StatusLoggedOut}); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.Linked(ctx); err != nil || len(ids) != 0 {
		t.Errorf("linked after logout %v, %v", ids, err)
	}
}

// oneSession opens a database of the run's backend holding session s1 of
// user u1.
func oneSession(t *testing.T) *ent.Client {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	return db
}
