package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testclient"
)

// TestReadyWaitsForTheFirstShare: Ready is closed once the sessions the
// first tick took have been started, even when later ticks (which take
// nothing new) run meanwhile. On main before this change the second tick,
// a third of the TTL later, closed Ready while the first share was still
// being started: with 200 sessions on a loaded machine /readyz turned 200
// with 16 to 124 of them not started yet (TestListensBeforeSessionsAreStarted
// on PostgreSQL).
func TestReadyWaitsForTheFirstShare(t *testing.T) {
	_, d := openCluster(t)
	createSessions(t, d.Ent, 3)
	w := newWorld()
	slow := &slowLocal{fakeLocal: w.local("p0"), let: make(chan struct{})}
	const ttl = 600 * time.Millisecond // ticks every 200 ms
	n, err := New(Options{DB: d.SQL, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Join(context.Background(), slow); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx) }()
	defer func() { cancel(); <-done }()

	testclient.Until(t, 5*time.Second, "the first tick takes the 3 sessions", func() bool { return n.Held() == 3 })
	// Several ticks pass while the sessions are still being started.
	select {
	case <-n.Ready():
		t.Fatalf("Ready was closed while the sessions taken were still being started (%d running)", slow.count())
	case <-time.After(3 * ttl):
	}
	close(slow.let)
	select {
	case <-n.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("Ready not closed 5 s after the sessions were started")
	}
	if got := slow.count(); got != 3 {
		t.Errorf("%d sessions running once Ready is closed, want 3", got)
	}
}
