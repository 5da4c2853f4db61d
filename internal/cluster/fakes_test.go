package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// The TTL of the tests' leases: short, so that expiry and takeover take
// seconds.
const testTTL = 3 * time.Second

// world is every fake process's sessions at once: which process runs each
// session, and every moment one was started while another ran it.
type world struct {
	mu       sync.Mutex
	running  map[string]*fakeLocal // session → the process running it
	overlaps []string
}

func newWorld() *world { return &world{running: map[string]*fakeLocal{}} }

// checkNoOverlap fails the test if a session ever ran on two processes
// at once.
func (w *world) checkNoOverlap(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.overlaps {
		t.Errorf("a session ran twice: %s", o)
	}
}

// runners returns session → the names of the processes running it.
func (w *world) runnerOf(id string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.running[id]; l != nil {
		return l.name
	}
	return ""
}

// fakeLocal is one process's session manager: it records what it runs,
// when each session started and stopped, and starts nothing that another
// fake process of its world runs without recording an overlap.
type fakeLocal struct {
	name string
	w    *world

	// Guarded by w.mu.
	runs      map[string]bool
	pairing   map[string]bool // sessions whose QR code is being scanned
	adoptedAt map[string]time.Time
	released  map[string]time.Time // the last Release of each session
}

func (w *world) local(name string) *fakeLocal {
	return &fakeLocal{
		name: name, w: w, runs: map[string]bool{}, pairing: map[string]bool{},
		adoptedAt: map[string]time.Time{}, released: map[string]time.Time{},
	}
}

func (l *fakeLocal) Adopt(_ context.Context, id string, still func() bool) error {
	if !still() {
		return nil
	}
	now := time.Now()
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	if other := l.w.running[id]; other != nil && other != l {
		l.w.overlaps = append(l.w.overlaps, fmt.Sprintf("session %s started on %s while %s ran it", id, l.name, other.name))
	}
	l.w.running[id] = l
	l.runs[id] = true
	l.adoptedAt[id] = now
	return nil
}

func (l *fakeLocal) AdoptEach(ctx context.Context, ids []string, still func(string) bool, done func(int, error)) {
	for i, id := range ids {
		done(i, l.Adopt(ctx, id, func() bool { return still(id) }))
	}
}

func (l *fakeLocal) Release(id string) {
	now := time.Now()
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	l.stopLocked(id)
	l.released[id] = now
}

func (l *fakeLocal) stopLocked(id string) {
	if l.w.running[id] == l {
		delete(l.w.running, id)
	}
	delete(l.runs, id)
}

func (l *fakeLocal) State(id string) whatsapp.SessionState {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	switch {
	case l.pairing[id]:
		return whatsapp.SessionState{Status: whatsapp.StatusPairing}
	case l.runs[id]:
		return whatsapp.SessionState{Status: whatsapp.StatusConnected}
	}
	return whatsapp.SessionState{Status: whatsapp.StatusDisconnected}
}

// crash stops every session as a killed process does: no Release.
func (l *fakeLocal) crash() {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	for id := range l.runs {
		l.stopLocked(id)
	}
}

// stopAll stops every session as a process closing its manager does.
func (l *fakeLocal) stopAll() {
	for _, id := range l.running() {
		l.Release(id)
	}
}

func (l *fakeLocal) running() []string {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	ids := make([]string, 0, len(l.runs))
	for id := range l.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (l *fakeLocal) count() int {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return len(l.runs)
}

func (l *fakeLocal) setPairing(id string) {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	l.pairing[id] = true
}

func (l *fakeLocal) releasedAt(id string) (time.Time, bool) {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	at, ok := l.released[id]
	return at, ok
}

func (l *fakeLocal) adoptedTime(id string) time.Time {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return l.adoptedAt[id]
}

// openCluster returns a fresh PostgreSQL database for the test, skipping
// on SQLite: cluster mode exists only on PostgreSQL.
func openCluster(t *testing.T) (dbtest.Location, *storage.DB) {
	t.Helper()
	if !dbtest.Postgres(t) {
		t.Skip("cluster mode needs PostgreSQL: the PostgreSQL pass of make test runs it")
	}
	loc := dbtest.NewLocation(t)
	return loc, loc.Open(t)
}

// createSessions creates n sessions of one user, oldest first, and
// returns their ids.
func createSessions(t *testing.T, c *ent.Client, n int) []string {
	t.Helper()
	ctx := context.Background()
	owner := c.User.Create().SetID("owner").SetName("owner").SaveX(ctx)
	base := time.Now().Add(-time.Hour)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
		c.Session.Create().SetID(ids[i]).SetOwnerID(owner.ID).SetCreatedAt(base.Add(time.Duration(i) * time.Second)).SaveX(ctx)
	}
	return ids
}

// member is a Node standing for one process, with its fake manager.
type member struct {
	*Node
	local *fakeLocal
	stop  func() // ends Run and waits for it
}

// join makes a process on db join the cluster (without running it).
func join(t *testing.T, db *sql.DB, l *fakeLocal, ttl time.Duration, advertise string) *Node {
	t.Helper()
	n, err := New(Options{DB: db, TTL: ttl, Advertise: advertise})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Join(context.Background(), l); err != nil {
		t.Fatalf("%s joins: %v", l.name, err)
	}
	return n
}

// start makes a process on db join the cluster and runs it until the test
// ends or stop is called.
func start(t *testing.T, db *sql.DB, l *fakeLocal) *member {
	t.Helper()
	n := join(t, db, l, testTTL, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return &member{Node: n, local: l, stop: stop}
}

// leaseRow is a session's lease as stored.
type leaseRow struct {
	holder  string
	fence   int64
	expires time.Time
}

func leases(t *testing.T, db *sql.DB) map[string]leaseRow {
	t.Helper()
	rows, err := db.Query(`SELECT session_id, holder, fence, expires_at FROM session_leases`)
	if err != nil {
		t.Fatalf("read the leases: %v", err)
	}
	defer rows.Close()
	out := map[string]leaseRow{}
	for rows.Next() {
		var id string
		var r leaseRow
		if err := rows.Scan(&id, &r.holder, &r.fence, &r.expires); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// slowLocal is a fakeLocal whose AdoptEach waits until let is closed
// before starting anything: a manager still logging in the sessions it
// took.
type slowLocal struct {
	*fakeLocal
	let chan struct{}
}

func (l *slowLocal) AdoptEach(ctx context.Context, ids []string, still func(string) bool, done func(int, error)) {
	select {
	case <-l.let:
	case <-ctx.Done():
	}
	l.fakeLocal.AdoptEach(ctx, ids, still, done)
}

// opOf is an operation of a test, served like the manager's.
func opOf[A, R any](fn func(ctx context.Context, sessionID string, a A) (R, error)) op {
	return func(ctx context.Context, sessionID string, raw json.RawMessage) (any, error) {
		var a A
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("decode the arguments: %w", err)
		}
		return fn(ctx, sessionID, a)
	}
}
