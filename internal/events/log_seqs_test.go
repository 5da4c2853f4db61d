package events

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestBatchOfManySessions (issue 35): a batch of appends to several
// sessions continues each session's seq from what it stored (none, or
// some), and on PostgreSQL costs the same statements as a batch of one
// session: the last seqs and the notifications of all its sessions are a
// statement each, not one per session (each statement is a round trip to
// the server, and the batching goroutine's round trips are the inbound
// path's serial step there).
func TestBatchOfManySessions(t *testing.T) {
	const n = 8
	var sessions []string
	for i := range n {
		sessions = append(sessions, fmt.Sprintf("s%d", i+1))
	}
	_, d := openStorage(t, sessions...)
	var statements atomic.Int64
	drv := dialect.DebugWithContext(entsql.OpenDB(d.Dialect, d.SQL), func(context.Context, ...any) { statements.Add(1) })
	l := newLog(t, ent.NewClient(ent.Driver(drv)), LogOptions{})
	ctx := context.Background()
	batch := func(sessions ...string) []*request {
		var out []*request
		for _, s := range sessions {
			out = append(out, &request{ctx: ctx, sessionID: s, evs: []New{{Kind: MessagesUpdate, Data: data(`{}`)}}})
		}
		return out
	}
	// The batching goroutine is idle: the batches are written here.
	write := func(b []*request) ([][]Envelope, int64) {
		t.Helper()
		before := statements.Load()
		envs, err := l.write(b)
		if err != nil {
			t.Fatal(err)
		}
		return envs, statements.Load() - before
	}
	// s1 has 2 events and s2 one before the batch; the others none.
	write(batch("s1"))
	write(batch("s1"))
	_, one := write(batch("s2"))
	envs, many := write(batch(sessions...))
	for i, s := range sessions {
		want := int64(1)
		switch s {
		case "s1":
			want = 3
		case "s2":
			want = 2
		}
		if got := envs[i][0].Seq; envs[i][0].SessionID != s || got != want {
			t.Errorf("%s's event: session %s seq %d, want seq %d", s, envs[i][0].SessionID, got, want)
		}
	}
	if dbtest.Postgres(t) && many != one {
		t.Errorf("a batch of %d sessions took %d statements, one session's %d: want the same", n, many, one)
	}
	t.Logf("statements: a batch of one session %d, of %d sessions %d", one, n, many)
}
