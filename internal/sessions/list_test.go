package sessions

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestList: each caller lists the sessions it reaches, oldest first (an
// admin every one, a user its own, a session token its session), each
// with the status record its holder saved.
func TestList(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("one").ExecX(ctx)
	db.User.Create().SetID("u2").SetName("two").ExecX(ctx)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, s := range []struct{ id, owner string }{{"s2", "u1"}, {"s1", "u2"}, {"s3", "u1"}} {
		db.Session.Create().SetID(s.id).SetOwnerID(s.owner).SetCreatedAt(at.Add(time.Duration(i) * time.Minute)).ExecX(ctx)
	}
	saved := whatsapp.StatusRecord{Status: whatsapp.StatusConnected, JID: "4915550001:3@s.whatsapp.net", PushName: "Ada", ConnectedAt: at}
	if err := NewStatusStore(db).SaveStatus(ctx, "s3", saved); err != nil {
		t.Fatal(err)
	}
	svc := NewService(ServiceOptions{DB: db, Tokens: &fakeTokens{}, Unlinker: failingUnlinker{}, Now: time.Now, NewID: func() string { return "x" }})
	for _, tc := range []struct {
		name string
		p    *auth.Principal
		want []string
	}{
		{"admin", &auth.Principal{UserID: "u2", Admin: true}, []string{"s2", "s1", "s3"}},
		{"user", &auth.Principal{UserID: "u1"}, []string{"s2", "s3"}},
		{"session token", &auth.Principal{UserID: "u1", SessionID: "s3"}, []string{"s3"}},
		{"user without sessions", &auth.Principal{UserID: "u3"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := svc.List(ctx, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range Stored(recs) {
				ids = append(ids, s.ID)
				if s.ID == "s3" && (s.Record.Status != saved.Status || s.Record.JID != saved.JID || s.Record.PushName != saved.PushName || !s.Record.ConnectedAt.Equal(at)) {
					t.Errorf("s3 listed with %+v, want the record saved %+v", s.Record, saved)
				}
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("listed %v, want %v", ids, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		id     string
		exists bool
		at     time.Time
	}{{"s3", true, at}, {"s2", true, time.Time{}}, {"nope", false, time.Time{}}} {
		if ok, err := svc.Exists(ctx, tc.id); err != nil || ok != tc.exists {
			t.Errorf("Exists(%s) = %v, %v; want %v", tc.id, ok, err, tc.exists)
		}
		got, ok, err := svc.ConnectedAt(ctx, tc.id)
		if err != nil || ok != !tc.at.IsZero() || !got.Equal(tc.at) {
			t.Errorf("ConnectedAt(%s) = %v, %v, %v; want %v", tc.id, got, ok, err, tc.at)
		}
	}
}
