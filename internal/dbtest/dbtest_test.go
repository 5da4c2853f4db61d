package dbtest_test

import (
	"context"
	"os"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestOpenFresh: each Open is a database of the run's backend (PostgreSQL
// on the second pass of `make test`, never SQLite in its place), with the
// schema, and apart from the others: what one test writes another does not
// see; a Location opened again holds what was written before.
func TestOpenFresh(t *testing.T) {
	ctx := context.Background()
	want := dialect.SQLite
	if os.Getenv(dbtest.BackendEnv) == "postgres" {
		want = dialect.Postgres
	}
	loc := dbtest.NewLocation(t)
	a := loc.Open(t)
	b := dbtest.Open(t)
	for _, d := range []string{a.Dialect, b.Dialect} {
		if d != want {
			t.Fatalf("dialect %s, want %s (%s=%q)", d, want, dbtest.BackendEnv, os.Getenv(dbtest.BackendEnv))
		}
	}
	a.Ent.User.Create().SetID("u1").SetName("alice").ExecX(ctx)
	if n := b.Ent.User.Query().CountX(ctx); n != 0 {
		t.Errorf("a second database holds %d users of the first, want 0", n)
	}
	a.Close()
	again := loc.Open(t)
	if u := again.Ent.User.GetX(ctx, "u1"); u.Name != "alice" {
		t.Errorf("reopened: user %+v, want alice", u)
	}
}
