package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
)

// TestEventsReachEveryProcess: two servers on one PostgreSQL database; the
// events one publishes reach the live subscribers of the other (its bus
// follows the log, told by its listener), and the other way round.
func TestEventsReachEveryProcess(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	cfgA := apptest.Config(t)
	cfgB := apptest.Config(t)
	cfgB.DatabaseURL = cfgA.DatabaseURL
	// Live randomness: two processes drawing the same ids would collide.
	a, b := apptest.StartLive(t, cfgA), apptest.StartLive(t, cfgB)
	session := a.CreateSession(t, "shared")
	ctx := context.Background()
	subs := map[*apptest.Server]*events.Subscription{}
	for _, s := range []*apptest.Server{a, b} {
		sub, err := s.App.Bus().Subscribe(ctx, session, []events.Kind{events.MessagesUpdate}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		subs[s] = sub
	}
	// One at a time, each received by both before the next: past the
	// first (replayed), every event reaches them live.
	for i, s := range []*apptest.Server{a, b, a, b, b, a} {
		envs, err := s.App.Bus().Publish(ctx, session, []events.New{{Kind: events.MessagesUpdate, Data: []byte(fmt.Sprintf(`{"i":%d}`, i))}})
		if err != nil {
			t.Fatal(err)
		}
		want := envs[0]
		for s, sub := range subs {
			nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			got, err := sub.Next(nctx)
			cancel()
			if err != nil {
				t.Fatalf("server %s, event %d: %v", s.URL, i, err)
			}
			if got.ID != want.ID || got.Seq != want.Seq || string(got.Data) != string(want.Data) {
				t.Fatalf("server %s: got seq %d %s %s, want seq %d %s %s", s.URL, got.Seq, got.ID, got.Data, want.Seq, want.ID, want.Data)
			}
		}
	}
}
