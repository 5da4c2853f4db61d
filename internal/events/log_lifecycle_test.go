package events

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entevent "github.com/wagraph/wagraph/ent/event"
	entuser "github.com/wagraph/wagraph/ent/user"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestAfter: pages in seq order from a cursor, with and without a kinds
// filter, never crossing sessions.
func TestAfter(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	l := newLog(t, db, LogOptions{})
	kinds := []Kind{MessagesUpdate, ConnectionUpdate, MessagesUpdate, PresenceUpdate, MessagesUpdate, ConnectionUpdate, MessagesUpdate}
	var evs []New
	for i, k := range kinds {
		evs = append(evs, New{Kind: k, Data: data(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if _, err := l.Append(ctx, "s1", evs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s2", evs[:3]); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		session  string
		after    int64
		kinds    []Kind
		limit    int
		wantSeqs []int64
	}{
		{"first page", "s1", 0, nil, 3, []int64{1, 2, 3}},
		{"next page", "s1", 3, nil, 3, []int64{4, 5, 6}},
		{"last page", "s1", 6, nil, 3, []int64{7}},
		{"past the end", "s1", 7, nil, 3, nil},
		{"kinds", "s1", 0, []Kind{MessagesUpdate}, 2, []int64{1, 3}},
		{"kinds next page", "s1", 3, []Kind{MessagesUpdate}, 2, []int64{5, 7}},
		{"two kinds", "s1", 1, []Kind{ConnectionUpdate, PresenceUpdate}, 10, []int64{2, 4, 6}},
		{"kind never seen", "s1", 0, []Kind{Call}, 10, nil},
		{"other session", "s2", 0, nil, 0, []int64{1, 2, 3}},
		{"unknown session", "nope", 0, nil, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.After(ctx, tt.session, tt.after, tt.kinds, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, e := range got {
				seqs = append(seqs, e.Seq)
				if e.SessionID != tt.session {
					t.Errorf("event of session %s in %s's page", e.SessionID, tt.session)
				}
				if want := fmt.Sprintf(`{"n":%d}`, e.Seq-1); string(e.Data) != want || e.Kind != kinds[e.Seq-1] {
					t.Errorf("seq %d: %s %s, want %s %s", e.Seq, e.Kind, e.Data, kinds[e.Seq-1], want)
				}
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.wantSeqs) {
				t.Errorf("seqs %v, want %v", seqs, tt.wantSeqs)
			}
		})
	}
}

// TestPrune: events older than the cut go with their finished deliveries;
// an old event with a pending delivery stays, and so do newer events and
// each session's latest event (the next seq counts from it).
func TestPrune(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1")
	db.Webhook.Create().SetID("w1").SetSessionID("s1").SetURL("https://example.com/").
		SetEvents([]string{string(MessagesUpdate)}).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newLog(t, db, LogOptions{Now: clock.now})
	old, err := l.Append(ctx, "s1", []New{
		{Kind: MessagesUpdate},   // delivered: goes
		{Kind: MessagesUpdate},   // failed: goes
		{Kind: MessagesUpdate},   // pending: stays
		{Kind: ConnectionUpdate}, // no delivery: goes
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []entdelivery.Status{entdelivery.StatusDELIVERED, entdelivery.StatusFAILED} {
		db.Delivery.Update().Where(entdelivery.EventID(old[i].ID)).SetStatus(st).ExecX(ctx)
	}
	clock.set(clock.now().Add(48 * time.Hour))
	recent, err := l.Append(ctx, "s1", []New{{Kind: ConnectionUpdate}})
	if err != nil {
		t.Fatal(err)
	}

	n, err := l.Prune(ctx, Cut{Before: clock.now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if n != (Pruned{Events: 3}) {
		t.Errorf("pruned %+v, want 3 events", n)
	}
	left := db.Event.Query().Order(ent.Asc(entevent.FieldSeq)).IDsX(ctx)
	if want := []string{old[2].ID, recent[0].ID}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("left %v, want the pending one and the recent one %v", left, want)
	}
	if d := db.Delivery.Query().AllX(ctx); len(d) != 1 || d[0].EventID != old[2].ID {
		t.Errorf("deliveries left %v, want only the pending one", d)
	}
	// With every delivery finished and every event past retention, the
	// latest event stays: seq goes on from it, never reusing a number under
	// a subscriber's cursor.
	db.Delivery.Update().SetStatus(entdelivery.StatusDELIVERED).ExecX(ctx)
	if n, err := l.Prune(ctx, Cut{Before: clock.now().Add(time.Hour)}); err != nil || n.Events != 1 {
		t.Errorf("second prune: %+v, %v; want 1 (all but the latest)", n, err)
	}
	if left := db.Event.Query().IDsX(ctx); len(left) != 1 || left[0] != recent[0].ID {
		t.Errorf("left %v, want the latest %s", left, recent[0].ID)
	}
	next, err := l.Append(ctx, "s1", []New{{Kind: Call}})
	if err != nil || next[0].Seq != 6 {
		t.Errorf("next append: %v, %+v; want seq 6", err, next)
	}
}

// TestAppendRejects: input that can never be stored is refused before it
// joins a batch, and Append after Close fails with ErrClosed.
func TestAppendRejects(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1")
	l := NewLog(db, LogOptions{})
	tests := []struct {
		name string
		evs  []New
		want string
	}{
		{"unknown kind", []New{{Kind: "messages.upserted"}}, `unknown kind "messages.upserted"`},
		{"bad data", []New{{Kind: Call}, {Kind: Call, Data: data(`{"a":`)}}, "event 1 (call): data is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := l.Append(ctx, "s1", tt.evs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	if _, err := l.Append(ctx, "s1", []New{{Kind: Call}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s1", []New{{Kind: Call}}); !errors.Is(err, ErrClosed) {
		t.Errorf("append after Close: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := db.Event.Query().CountX(ctx); n != 1 {
		t.Errorf("%d events stored, want 1", n)
	}
}

// TestBatchFailure: when one append makes a batch's transaction fail on a
// constraint (here it names a session that does not exist: a foreign key,
// as a session deleted meanwhile would), that caller gets the error and
// nothing of its append is stored; the others of the batch are committed
// each alone, deliveries and all; the next batch works.
func TestBatchFailure(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	db.Webhook.Create().SetID("w1").SetSessionID("s1").SetURL("https://example.com/").
		SetEvents([]string{string(Call)}).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
	// Three appends of one event fill a batch of three: they share a
	// transaction however the goroutines are scheduled.
	l := newLog(t, db, LogOptions{MaxBatch: 3, MaxWait: time.Minute})
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, s := range []string{"s1", "missing", "s2"} {
		wg.Go(func() {
			_, errs[i] = l.Append(ctx, s, []New{{Kind: Call}})
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("appends of existing sessions failed with the batch: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil {
		t.Error("the append of a missing session succeeded")
	}
	if n := db.Event.Query().CountX(ctx); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	if n := db.Delivery.Query().CountX(ctx); n != 1 {
		t.Errorf("%d deliveries stored, want 1", n)
	}
	if st := l.Stats(); st.Batches != 2 || st.Events != 2 {
		t.Errorf("stats %+v, want the two commits of one event", st)
	}

	// A batch of its own (bigger than MaxBatch) commits alone, without
	// waiting for company, and its seq follows: the failed append used none.
	envs, err := l.Append(ctx, "s1", []New{{Kind: Call}, {Kind: Call}, {Kind: Call}, {Kind: Call}})
	if err != nil {
		t.Fatal(err)
	}
	if envs[0].Seq != 2 || envs[3].Seq != 5 {
		t.Errorf("seqs %d..%d, want 2..5", envs[0].Seq, envs[3].Seq)
	}
}

// TestAppendCanceledWhileQueued: a caller that gives up before its append
// joins a batch gets its context's error, and the append is never stored;
// a caller whose batch is already running does not cancel it for the others.
func TestAppendCanceledWhileQueued(t *testing.T) {
	ctx := context.Background()
	db, d := openStorage(t, "s1")
	// The batch goroutine reads randomness for ids before it begins the
	// transaction: the first read says a batch has been taken.
	taken := make(chan struct{})
	l := newLog(t, db, LogOptions{MaxBatch: 1, Random: &signalReader{r: rand.Reader, first: taken}})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Append(cctx, "s1", []New{{Kind: Call}}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled append: %v, want context.Canceled", err)
	}
	select {
	case <-taken:
		t.Fatal("a canceled append reached a batch")
	default:
	}

	// Another transaction holds what the log's writer waits for: SQLite's
	// write lock (an immediate transaction of another connection), or the
	// session's row lock on PostgreSQL (Log.lockSessions). The first batch
	// waits, so the second append stays queued until its caller gives up.
	lock := holdWriteLock(t, d, "s1")
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := l.Append(ctx, "s1", []New{{Kind: Call, Data: data(`{"kept":true}`)}}); err != nil {
			t.Error(err)
		}
	})
	<-taken // the first append is taken: its batch waits for the lock
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.Append(tctx, "s1", []New{{Kind: Call, Data: data(`{"kept":false}`)}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timed-out append: %v, want context.DeadlineExceeded", err)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := l.Append(ctx, "s1", []New{{Kind: Call, Data: data(`{"after":true}`)}}); err != nil {
		t.Fatal(err)
	}
	stored, err := l.After(ctx, "s1", 0, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range stored {
		got = append(got, fmt.Sprintf("%d%s", e.Seq, e.Data))
	}
	if want := []string{`1{"kept":true}`, `2{"after":true}`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored %v, want %v", got, want)
	}
}

// signalReader closes first on its first Read.
type signalReader struct {
	r     io.Reader
	once  sync.Once
	first chan struct{}
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.first) })
	return s.r.Read(p)
}

// holdWriteLock begins a transaction that holds what the log's writer of
// session needs until it is rolled back.
func holdWriteLock(t *testing.T, d *storage.DB, session string) *sql.Tx {
	t.Helper()
	ctx := context.Background()
	if d.Dialect == dialect.Postgres {
		lock, err := d.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lock.ExecContext(ctx, "SELECT id FROM sessions WHERE id = $1 FOR NO KEY UPDATE", session); err != nil {
			t.Fatal(err)
		}
		return lock
	}
	other, err := sql.Open("sqlite3", ent.SQLiteDSN(d.Where))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	lock, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return lock
}

// TestAppendWith: what an append's Build writes commits with its events,
// in the batch's one transaction; a Build that fails fails its own append
// alone, its writes rolled back, the other appends of the batch stored with
// theirs (issue 35: the message and chat rows of many sessions' messages
// share one commit with their events).
func TestAppendWith(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2", "s3")
	// Three appends fill a batch of three: they share a transaction
	// however the goroutines are scheduled.
	l := newLog(t, db, LogOptions{MaxBatch: 3, MaxWait: time.Minute})
	build := func(session string, fail bool) Build {
		return func(ctx context.Context, tx *ent.Tx) ([]New, error) {
			// A row of another table, named for the session.
			if err := tx.User.Create().SetID("by-" + session).SetName(session).Exec(ctx); err != nil {
				return nil, err
			}
			if fail {
				return nil, fmt.Errorf("refused")
			}
			return []New{{Kind: Call, Data: data(`{"from":"` + session + `"}`)}}, nil
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	envs := make([][]Envelope, 3)
	for i, s := range []string{"s1", "s2", "s3"} {
		wg.Go(func() {
			envs[i], errs[i] = l.AppendWith(ctx, s, 1, build(s, s == "s2"))
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("appends whose Build succeeded failed with the batch: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "refused") {
		t.Errorf("the append whose Build failed: %v, want its error", errs[1])
	}
	for _, i := range []int{0, 2} {
		if len(envs[i]) != 1 || envs[i][0].Seq != 1 || envs[i][0].Kind != Call {
			t.Errorf("append %d: envelopes %+v, want its one event at seq 1", i, envs[i])
		}
	}
	if n := db.Event.Query().CountX(ctx); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	users := db.User.Query().Where(entuser.NameIn("s1", "s2", "s3")).IDsX(ctx)
	slices.Sort(users)
	if !slices.Equal(users, []string{"by-s1", "by-s3"}) {
		t.Errorf("Build's rows stored: %v, want those of the appends stored (by-s1, by-s3)", users)
	}
}
