package events

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// process is one wagraph process over a shared PostgreSQL database: its
// own pool, log, following bus and listener, as internal/app builds them.
type process struct {
	db        *storage.DB
	log       *Log
	bus       *Bus
	listener  *storage.Listener
	connected chan struct{} // a signal each time its listener listens (after FollowAll)
}

// startProcess starts a process over the database at loc; backoff, when
// not nil, is its listener's.
func startProcess(t *testing.T, loc dbtest.Location, backoff func(int) time.Duration) *process {
	t.Helper()
	p := &process{db: loc.Open(t), connected: make(chan struct{}, 16)}
	p.log = newLog(t, p.db.Ent, LogOptions{})
	p.bus = NewBus(p.log, BusOptions{Buffer: 100000, Follow: true})
	t.Cleanup(p.bus.Close)
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: loc.URL, Channel: NotifyChannel, Notify: p.bus.Notified, Backoff: backoff,
		Connected: func() {
			p.bus.FollowAll()
			p.connected <- struct{}{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close) // before the bus closes and the pool
	p.listener = l
	waitSignal(t, p.connected, "the listener to listen")
	return p
}

func waitSignal(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// sharedDatabase is a fresh PostgreSQL database with sessions; the test is
// skipped on SQLite, whose database one process holds.
func sharedDatabase(t *testing.T, sessions ...string) dbtest.Location {
	t.Helper()
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	loc := dbtest.NewLocation(t)
	db := loc.Open(t).Ent
	ctx := context.Background()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range sessions {
		db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	return loc
}

// consume reads a subscription as its consumer does, at once, until it
// ends: events come live while they are published, not replayed after.
func consume(t *testing.T, s *Subscription) <-chan Envelope {
	out := make(chan Envelope, 100000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for {
			e, err := s.Next(context.Background())
			if err != nil {
				return
			}
			out <- e
		}
	}()
	t.Cleanup(func() { s.Close(); <-done })
	return out
}

// expectSeqs is receiveSeqs for a consumed subscription.
func expectSeqs(t *testing.T, c <-chan Envelope, l *Log, sessionID string, after int64, n int) {
	t.Helper()
	stored, err := l.After(context.Background(), sessionID, after, nil, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != n {
		t.Fatalf("session %s: the log holds %d events after %d, want %d", sessionID, len(stored), after, n)
	}
	for i, want := range stored {
		var e Envelope
		select {
		case got, ok := <-c:
			if !ok {
				t.Fatalf("session %s: the subscription ended after %d of %d events", sessionID, i, n)
			}
			e = got
		case <-time.After(10 * time.Second):
			t.Fatalf("session %s: timed out waiting for event %d of %d (seq %d)", sessionID, i, n, want.Seq)
		}
		if e.Seq != after+int64(i)+1 || e.ID != want.ID || e.Kind != want.Kind || !bytes.Equal(e.Data, want.Data) || !e.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("session %s: event %d is seq %d %s %s, want seq %d %s %s", sessionID, i, e.Seq, e.ID, e.Data, want.Seq, want.ID, want.Data)
		}
	}
}

// receiveSeqs reads n events and fails unless they are seqs after..after+n
// in order, each the envelope the log holds.
func receiveSeqs(t *testing.T, s *Subscription, l *Log, after int64, n int) {
	t.Helper()
	stored, err := l.After(context.Background(), s.sessionID, after, nil, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != n {
		t.Fatalf("session %s: the log holds %d events after %d, want %d", s.sessionID, len(stored), after, n)
	}
	for i := range n {
		e := next(t, s)
		want := stored[i]
		if e.Seq != after+int64(i)+1 || e.ID != want.ID || e.Kind != want.Kind || !bytes.Equal(e.Data, want.Data) || !e.Timestamp.Equal(want.Timestamp) {
			t.Fatalf("session %s: event %d is seq %d %s %s, want seq %d %s %s", s.sessionID, i, e.Seq, e.ID, e.Data, want.Seq, want.ID, want.Data)
		}
	}
}

// TestFollowAcrossProcesses: two processes append to three sessions at once
// (single and several events per append); the subscribers of both
// processes, live-only ones from the start and ones with a cursor joining
// midway, get every event of their session exactly once, in seq order, as
// stored, whichever process committed it.
func TestFollowAcrossProcesses(t *testing.T) {
	sessions := []string{"s1", "s2", "s3"}
	loc := sharedDatabase(t, sessions...)
	procs := []*process{startProcess(t, loc, nil), startProcess(t, loc, nil)}
	type sub struct {
		c     <-chan Envelope
		id    string
		p     *process
		after int64
	}
	var subs []sub
	for _, p := range procs {
		for _, id := range sessions {
			s, err := p.bus.Subscribe(context.Background(), id, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub{consume(t, s), id, p, 0})
		}
	}
	const publishers, appends = 2, 60 // per process
	var pub sync.WaitGroup
	half := make(chan struct{})
	var halfOnce sync.Once
	for pi, p := range procs {
		for w := range publishers {
			pub.Go(func() {
				for i := range appends {
					if i == appends/2 {
						halfOnce.Do(func() { close(half) })
					}
					id := sessions[(w+i+pi)%len(sessions)]
					evs := []New{{Kind: MessagesUpdate, Data: data(fmt.Sprintf(`{"p":%d,"w":%d,"i":%d}`, pi, w, i))}}
					if i%5 == 0 {
						evs = append(evs, New{Kind: ChatsUpdate, Data: data(fmt.Sprintf(`{"p":%d,"w":%d,"i":%d,"second":true}`, pi, w, i))})
					}
					if _, err := p.bus.Publish(context.Background(), id, evs); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	go func() { pub.Wait(); halfOnce.Do(func() { close(half) }) }()
	// Joining while both processes append: from a cursor in the log.
	<-half
	for _, p := range procs {
		for _, id := range sessions {
			last, _, err := p.log.Last(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			from := &Cursor{Seq: last.Seq / 2}
			s, err := p.bus.Subscribe(context.Background(), id, nil, from)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub{consume(t, s), id, p, from.Seq})
		}
	}
	pub.Wait()
	if t.Failed() {
		return
	}
	for _, sb := range subs {
		last, _, err := sb.p.log.Last(context.Background(), sb.id)
		if err != nil {
			t.Fatal(err)
		}
		expectSeqs(t, sb.c, sb.p.log, sb.id, sb.after, int(last.Seq-sb.after))
	}
}

// TestFollowFromCursorAcrossProcesses: a subscriber of process B with a
// cursor replays what process A stored after it, then gets A's later
// events live.
func TestFollowFromCursorAcrossProcesses(t *testing.T) {
	loc := sharedDatabase(t, "s1")
	a, b := startProcess(t, loc, nil), startProcess(t, loc, nil)
	publishN(t, a.bus, "s1", MessagesUpdate, 10)
	s, err := b.bus.Subscribe(context.Background(), "s1", nil, &Cursor{Seq: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	receiveSeqs(t, s, b.log, 3, 7)
	publishN(t, a.bus, "s1", MessagesUpdate, 10)
	receiveSeqs(t, s, b.log, 10, 10)
}

// TestFollowListenerReconnect: the listener of process B loses its
// connection (its backend terminated) and A commits events before B
// listens again, so their notifications never reach B; its subscribers
// still get them once B listens again (FollowAll), then later ones as
// before.
func TestFollowListenerReconnect(t *testing.T) {
	loc := sharedDatabase(t, "s1", "s2")
	a := startProcess(t, loc, nil)
	lost, resume := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	b := startProcess(t, loc, func(failures int) time.Duration {
		// The first failure waits until the test has committed events.
		once.Do(func() {
			lost <- struct{}{}
			<-resume
		})
		return 10 * time.Millisecond
	})
	var subs []*Subscription
	for _, id := range []string{"s1", "s2"} {
		s, err := b.bus.Subscribe(context.Background(), id, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		subs = append(subs, s)
	}
	// Both past their replay: what comes next can only come live.
	publishN(t, a.bus, "s1", MessagesUpdate, 3)
	receiveSeqs(t, subs[0], b.log, 0, 3)
	publishN(t, a.bus, "s2", MessagesUpdate, 1)
	receiveSeqs(t, subs[1], b.log, 0, 1)

	if _, err := a.db.SQL.ExecContext(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
		storage.ListenerName); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, lost, "B's listener to lose its connection")
	waitSignal(t, a.connected, "A's listener to listen again")
	publishN(t, a.bus, "s1", MessagesUpdate, 4)
	publishN(t, a.bus, "s2", MessagesUpdate, 2)
	close(resume)
	waitSignal(t, b.connected, "B's listener to listen again")
	receiveSeqs(t, subs[0], b.log, 3, 4)
	receiveSeqs(t, subs[1], b.log, 1, 2)

	publishN(t, a.bus, "s2", MessagesUpdate, 2)
	receiveSeqs(t, subs[1], b.log, 3, 2)
}

// TestFollowNotified: a following bus fans out events another log
// committed (a second process, here without a listener) only when told, by
// a notification naming the session and a seq; payloads it cannot read are
// ignored and logged at debug. Runs on both backends: the follower reads
// the log either way.
func TestFollowNotified(t *testing.T) {
	db := openDB(t, "s1", "s2")
	var logs logtest.Buffer
	b := NewBus(newLog(t, db, LogOptions{}), BusOptions{
		Follow: true, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(b.Close)
	other := newLog(t, db, LogOptions{}) // another process's
	s, err := b.Subscribe(context.Background(), "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Past its replay: what comes next can only come live.
	publishN(t, b, "s1", MessagesUpdate, 1)
	receiveSeqs(t, s, b.log, 0, 1)
	for range 3 {
		if _, err := other.Append(context.Background(), "s1", []New{{Kind: MessagesUpdate}}); err != nil {
			t.Fatal(err)
		}
	}
	foreign := []string{"", "s1", "s1:", ":3", "s1:abc", "s1:-2", "s1:0", "s1:99999999999999999999", "hello world"}
	for _, p := range foreign {
		b.Notified(p)
	}
	b.Notified("s2:1") // a session without subscribers here
	// None of these asked for a read (Notified and Follow decide at once).
	b.mu.Lock()
	pending := len(b.follower.pending)
	b.mu.Unlock()
	s.mu.Lock()
	queued := 0
	for _, e := range s.queue {
		if e.Seq > 1 { // 1 was replayed too
			queued++
		}
	}
	s.mu.Unlock()
	if pending != 0 || queued != 0 {
		t.Fatalf("before a notification of s1: %d sessions to read, %d events queued; want none", pending, queued)
	}
	b.Notified("s1:3") // the log holds 4: all of them are read
	receiveSeqs(t, s, b.log, 1, 3)
	publishN(t, b, "s1", MessagesUpdate, 1)
	receiveSeqs(t, s, b.log, 4, 1)
	if n := strings.Count(logs.String(), "notification ignored"); n != len(foreign) {
		t.Errorf("%d payloads logged as ignored, want %d:\n%s", n, len(foreign), logs.String())
	}
}

// TestFollowForgetsSessions: a session whose last subscriber left is no
// longer followed, and one subscribed again starts from its log's end.
func TestFollowForgetsSessions(t *testing.T) {
	db := openDB(t, "s1")
	b := NewBus(newLog(t, db, LogOptions{}), BusOptions{Follow: true})
	t.Cleanup(b.Close)
	s, err := b.Subscribe(context.Background(), "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, b, "s1", MessagesUpdate, 2)
	receiveSeqs(t, s, b.log, 0, 2)
	s.Close()
	b.mu.Lock()
	followed := slices.Collect(maps.Keys(b.follower.fanned))
	b.mu.Unlock()
	if len(followed) != 0 {
		t.Fatalf("sessions followed after their last subscriber left: %v", followed)
	}
	publishN(t, b, "s1", MessagesUpdate, 2)
	s2, err := b.Subscribe(context.Background(), "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	publishN(t, b, "s1", MessagesUpdate, 1)
	receiveSeqs(t, s2, b.log, 4, 1)
}
