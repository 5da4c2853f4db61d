package cluster

import (
	"context"
	"maps"
	"testing"

	"github.com/wagraph/wagraph/internal/testclient"
)

// TestHoldersOf: one read says which of a list of sessions a live process
// holds, and which; a session nobody holds (or not asked about) is not in
// the answer, nor one whose process stopped.
func TestHoldersOf(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 3)
	w := newWorld()
	p0 := start(t, d.SQL, w.local("p0"))
	testclient.Until(t, 2*testTTL, "the process runs every session", func() bool { return p0.Held() == 3 })
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ask  []string
		want map[string]string
	}{
		{"none asked", nil, map[string]string{}},
		{"two of three", ids[:2], map[string]string{ids[0]: p0.ID(), ids[1]: p0.ID()}},
		{"one that does not exist", []string{"nope", ids[2]}, map[string]string{ids[2]: p0.ID()}},
	} {
		got, err := p0.HoldersOf(ctx, tc.ask)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: HoldersOf(%v) = %v, %v; want %v", tc.name, tc.ask, got, err, tc.want)
		}
	}
	p0.stop()
	if err := p0.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := p0.HoldersOf(ctx, ids); err != nil || len(got) != 0 {
		t.Errorf("after the process left: %v, %v; want nobody", got, err)
	}
}

// TestLive: a process is live while it runs; one never seen is not; one
// killed (stopped without leaving) stops being live when its row expires,
// within the lease TTL, which is when a send key it held is taken over.
func TestLive(t *testing.T) {
	_, d := openCluster(t)
	w := newWorld()
	p0 := start(t, d.SQL, w.local("p0"))
	ctx := context.Background()
	for _, tc := range []struct {
		id   string
		want bool
	}{{p0.ID(), true}, {"never-seen", false}} {
		if live, err := p0.Live(ctx, tc.id); err != nil || live != tc.want {
			t.Errorf("Live(%s) = %v, %v; want %v", tc.id, live, err, tc.want)
		}
	}
	p0.stop() // killed: no Leave
	testclient.Until(t, 2*testTTL, "the killed process is no longer live", func() bool {
		live, err := p0.Live(ctx, p0.ID())
		return err == nil && !live
	})
}
