package sessions

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
)

// fakeTokens issues "tok-<session>" and records the sessions ended.
type fakeTokens struct {
	mu    sync.Mutex
	ended []string
}

func (f *fakeTokens) IssueSessionToken(_ context.Context, _ *ent.Client, sessionID, _ string) (string, error) {
	return "tok-" + sessionID, nil
}

func (f *fakeTokens) EndSession(_ context.Context, sessionID string, _ []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = append(f.ended, sessionID)
}

// failingUnlinker fails every Delete with err.
type failingUnlinker struct{ err error }

func (f failingUnlinker) Delete(context.Context, string) error { return f.err }

// endedSubscriptions records the sessions whose subscriptions ended.
type endedSubscriptions struct{ ids []string }

func (e *endedSubscriptions) EndSession(id string) { e.ids = append(e.ids, id) }

// TestDeleteOncePolicy (issue 23): once the record is gone the delete has
// happened. A failure of the manager's part (here the process running the
// session did not answer) is logged and the delete answers success, so a
// client never sees a failure for a session that is gone and then
// NOT_FOUND when it tries again. The caches forget the session at once,
// its tokens and its subscriptions end.
func TestDeleteOncePolicy(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	log, buf := logtest.New(slog.LevelDebug)
	tokens, ended := &fakeTokens{}, &endedSubscriptions{}
	unreachable := fault.New(fault.NotConnected, "session s1: the process running it does not answer")
	n := 0
	svc := NewService(ServiceOptions{
		DB: db, Tokens: tokens, Unlinker: failingUnlinker{unreachable}, Ended: ended,
		Now: time.Now, NewID: func() string { n++; return []string{"", "s1", "s2"}[n] }, Logger: log,
	})
	owner := &auth.Principal{TokenID: "t", UserID: "u1"}
	rec, tok, err := svc.Create(ctx, owner, "")
	if err != nil || rec.ID != "s1" || rec.Name != "session-1" || tok != "tok-s1" {
		t.Fatalf("Create: %+v %q %v", rec, tok, err)
	}
	if err := svc.Reach(ctx, owner, "s1"); err != nil { // cached from here on
		t.Fatal(err)
	}

	if err := svc.Delete(ctx, rec); err != nil {
		t.Fatalf("Delete answered %v after the record was gone, want success", err)
	}
	if ok, _ := db.Session.Query().Exist(ctx); ok {
		t.Error("the record is still there")
	}
	if err := svc.Reach(ctx, owner, "s1"); fault.CodeOf(err) != fault.NotFound {
		t.Errorf("Reach after the delete: %v, want NOT_FOUND at once (not the cached owner)", err)
	}
	if len(tokens.ended) != 1 || len(ended.ids) != 1 {
		t.Errorf("tokens ended for %v, subscriptions for %v; want s1 once each", tokens.ended, ended.ids)
	}
	if len(buf.Lines("the session was deleted, but stopping it where it ran failed", "s1", "does not answer")) != 1 {
		t.Errorf("the failure is not logged with the session and its cause:\n%s", buf)
	}
}

// TestCreateQuota: a user who is not an admin has at most PerUser
// sessions (CONFLICT past it); an admin has no quota.
func TestCreateQuota(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	db.User.Create().SetID("u1").SetName("user").ExecX(ctx)
	db.User.Create().SetID("a1").SetName("admin").SetAdmin(true).ExecX(ctx)
	n := 0
	svc := NewService(ServiceOptions{
		DB: db, Tokens: &fakeTokens{}, Unlinker: failingUnlinker{}, Now: time.Now, PerUser: 1,
		NewID: func() string { n++; return string(rune('a'+n)) + "-session" },
	})
	for _, tc := range []struct {
		p    *auth.Principal
		want fault.Code
	}{
		{&auth.Principal{UserID: "u1"}, ""},
		{&auth.Principal{UserID: "u1"}, fault.Conflict},
		{&auth.Principal{UserID: "a1", Admin: true}, ""},
		{&auth.Principal{UserID: "a1", Admin: true}, ""},
	} {
		_, _, err := svc.Create(ctx, tc.p, "")
		if fault.CodeOf(err) != tc.want && !(tc.want == "" && err == nil) {
			t.Errorf("Create for %s: %v, want %q", tc.p.UserID, err, tc.want)
		}
	}
}
