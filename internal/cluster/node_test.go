package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testclient"
)

// TestRebalanceOnJoin: the first process takes every session; each process
// that joins gets its share, ceil(sessions / processes), taken from the
// others, and no session ever runs on two processes at once. A session
// being paired is never the one given away.
func TestRebalanceOnJoin(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		joiners  int   // processes joining after the first
		want     []int // sessions each process runs at the end, in join order
		pairing  int   // the first process's oldest sessions being paired
	}{
		{name: "two processes share ten sessions", sessions: 10, joiners: 1, want: []int{5, 5}},
		{name: "three processes share seven sessions", sessions: 7, joiners: 2, want: []int{3, 3, 1}},
		{name: "sessions being paired stay", sessions: 4, joiners: 1, want: []int{2, 2}, pairing: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, d := openCluster(t)
			ids := createSessions(t, d.Ent, tt.sessions)
			w := newWorld()
			t.Cleanup(func() { w.checkNoOverlap(t) })

			first := start(t, d.SQL, w.local("p0"))
			testclient.Until(t, 2*testTTL, "the first process runs every session", func() bool {
				return first.local.count() == tt.sessions && first.Held() == tt.sessions
			})
			for _, id := range ids[:tt.pairing] {
				first.local.setPairing(id)
			}
			members := []*member{first}
			for i := range tt.joiners {
				members = append(members, start(t, d.SQL, w.local(fmt.Sprintf("p%d", i+1))))
				share := (tt.sessions + len(members) - 1) / len(members)
				testclient.Until(t, 4*testTTL, fmt.Sprintf("%d processes each run at most %d of %d sessions", len(members), share, tt.sessions), func() bool {
					total := 0
					for _, m := range members {
						if m.local.count() > share {
							return false
						}
						total += m.local.count()
					}
					return total == tt.sessions
				})
			}
			testclient.Until(t, 4*testTTL, fmt.Sprintf("the processes run %v sessions", tt.want), func() bool {
				for i, m := range members {
					if m.local.count() != tt.want[i] {
						return false
					}
				}
				return true
			})
			w.checkNoOverlap(t)
			for _, id := range ids[:tt.pairing] {
				if w.runnerOf(id) != "p0" {
					t.Errorf("session %s, being paired, was given away (now on %q)", id, w.runnerOf(id))
				}
			}
			// Each process runs exactly the sessions it holds the leases of.
			stored := leases(t, d.SQL)
			for _, m := range members {
				if got, held := m.local.running(), m.HeldIDs(); !slices.Equal(got, held) {
					t.Errorf("%s runs %v, holds %v", m.local.name, got, held)
				}
				for _, id := range m.HeldIDs() {
					if stored[id].holder != m.ID() {
						t.Errorf("%s holds session %s, the stored lease names %q", m.local.name, id, stored[id].holder)
					}
				}
			}
		})
	}
}

// TestLeaveGivesLeasesBack: a process that stops gracefully gives its
// leases back; the others take the sessions at their next tick instead of
// waiting for the leases to expire.
func TestLeaveGivesLeasesBack(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 10)
	w := newWorld()
	t.Cleanup(func() { w.checkNoOverlap(t) })
	a := start(t, d.SQL, w.local("a"))
	testclient.Until(t, 2*testTTL, "a runs every session", func() bool { return a.local.count() == 10 })
	b := start(t, d.SQL, w.local("b"))
	testclient.Until(t, 4*testTTL, "a and b run 5 sessions each", func() bool { return a.local.count() == 5 && b.local.count() == 5 })

	// A graceful stop: the ticks end, the manager closes, the leases go.
	a.stop()
	a.local.stopAll()
	left := time.Now()
	if err := a.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Wake()
	testclient.Until(t, testTTL/2, "b runs every session after a left (a lease expiry would take up to the TTL)", func() bool {
		return b.local.count() == len(ids)
	})
	t.Logf("taken over %s after leaving", time.Since(left).Round(time.Millisecond))
	for id, l := range leases(t, d.SQL) {
		if l.holder != b.ID() {
			t.Errorf("session %s: lease held by %q, want b", id, l.holder)
		}
	}
	var nodes int
	if err := d.SQL.QueryRow(`SELECT count(*) FROM cluster_nodes WHERE id = $1`, a.ID()).Scan(&nodes); err != nil {
		t.Fatal(err)
	}
	if nodes != 0 {
		t.Errorf("a's row is still in cluster_nodes after Leave")
	}
	if a.Held() != 0 {
		t.Errorf("a holds %v after Leave", a.HeldIDs())
	}
	if err := a.Leave(context.Background()); err != nil {
		t.Errorf("a second Leave: %v", err)
	}
}

// TestDeadProcessSessionsTakenAtExpiry: a process that dies (no Leave)
// keeps its leases until they expire; then a survivor takes its sessions,
// within a tick of the expiry and never before it.
func TestDeadProcessSessionsTakenAtExpiry(t *testing.T) {
	_, d := openCluster(t)
	createSessions(t, d.Ent, 10)
	w := newWorld()
	t.Cleanup(func() { w.checkNoOverlap(t) })
	a := start(t, d.SQL, w.local("a"))
	testclient.Until(t, 2*testTTL, "a runs every session", func() bool { return a.local.count() == 10 })
	b := start(t, d.SQL, w.local("b"))
	testclient.Until(t, 4*testTTL, "a and b run 5 sessions each", func() bool { return a.local.count() == 5 && b.local.count() == 5 })

	a.stop()
	a.local.crash()
	killed := time.Now()
	orphans := a.HeldIDs()
	stored := leases(t, d.SQL)
	testclient.Until(t, testTTL+testTTL/3+time.Second, "b runs the dead process's sessions within TTL + TTL/3", func() bool {
		return b.local.count() == 10
	})
	t.Logf("taken over %s after the kill", time.Since(killed).Round(time.Millisecond))
	for _, id := range orphans {
		if at, exp := b.local.adoptedTime(id), stored[id].expires; at.Before(exp) {
			t.Errorf("session %s started on b at %s, before a's lease expired (%s)", id, at.Format(time.StampMilli), exp.Format(time.StampMilli))
		}
		if l := leases(t, d.SQL)[id]; l.holder != b.ID() || l.fence <= stored[id].fence {
			t.Errorf("session %s: lease %+v after the takeover, want b's with a fence above %d", id, l, stored[id].fence)
		}
	}
}

// TestClaim: of two processes claiming a session nobody holds at once,
// exactly one gets it (and starts it); a session another process holds, or
// one that does not exist, cannot be claimed.
func TestClaim(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 20)
	w := newWorld()
	t.Cleanup(func() { w.checkNoOverlap(t) })
	la, lb := w.local("a"), w.local("b")
	a := join(t, d.SQL, la, testTTL, "")
	b := join(t, d.SQL, lb, testTTL, "")
	ctx := context.Background()

	for _, id := range ids {
		var wg sync.WaitGroup
		var took [2]bool
		var errs [2]error
		gate := make(chan struct{})
		for i, n := range []*Node{a, b} {
			wg.Go(func() {
				<-gate
				took[i], errs[i] = n.Claim(ctx, id)
			})
		}
		close(gate)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("claim %s: %v, %v", id, errs[0], errs[1])
		}
		if took[0] == took[1] {
			t.Fatalf("claim %s at once: a took it %v, b took it %v; want exactly one", id, took[0], took[1])
		}
		winner, loser := a, b
		if took[1] {
			winner, loser = b, a
		}
		if !winner.Holds(id) || loser.Holds(id) {
			t.Errorf("claim %s: winner holds it %v, loser holds it %v", id, winner.Holds(id), loser.Holds(id))
		}
	}
	if got := la.count() + lb.count(); got != len(ids) {
		t.Errorf("%d sessions started after the claims, want %d", got, len(ids))
	}

	tests := []struct {
		name    string
		claimer *Node
		session string
	}{
		{name: "held by the other process", claimer: a, session: lb.running()[0]},
		{name: "held by the other process (b)", claimer: b, session: la.running()[0]},
		{name: "no such session", claimer: a, session: "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.runnerOf(tt.session)
			took, err := tt.claimer.Claim(ctx, tt.session)
			if err != nil || took {
				t.Errorf("Claim(%s) = %v, %v; want false, nil", tt.session, took, err)
			}
			if tt.claimer.Holds(tt.session) {
				t.Errorf("the claimer holds %s after a refused claim", tt.session)
			}
			if after := w.runnerOf(tt.session); after != before {
				t.Errorf("session %s ran on %q, now on %q", tt.session, before, after)
			}
		})
	}
}
