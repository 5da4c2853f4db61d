package events

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFindAndLast: Find returns an event of its session only; Last is the
// session's highest seq, none for an empty log.
func TestFindAndLast(t *testing.T) {
	ctx := context.Background()
	l := newLog(t, openDB(t, "s1", "s2"), LogOptions{})
	if _, found, err := l.Last(ctx, "s1"); found || err != nil {
		t.Fatalf("last of an empty log: found %v, %v", found, err)
	}
	envs, err := l.Append(ctx, "s1", []New{{Kind: Call}, {Kind: ChatsUpsert, Data: data(`{"id":"x"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s2", []New{{Kind: Call}}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Find(ctx, "s1", envs[1].ID)
	if err != nil || got.Seq != 2 || got.Kind != ChatsUpsert || string(got.Data) != `{"id":"x"}` || !got.Timestamp.Equal(envs[1].Timestamp) {
		t.Errorf("find: %+v, %v", got, err)
	}
	for _, tt := range []struct{ session, id string }{{"s2", envs[1].ID}, {"s1", "evt_nope"}} {
		if _, err := l.Find(ctx, tt.session, tt.id); !errors.Is(err, ErrNotFound) {
			t.Errorf("find %s in %s: %v, want ErrNotFound", tt.id, tt.session, err)
		}
	}
	last, found, err := l.Last(ctx, "s1")
	if err != nil || !found || last.ID != envs[1].ID {
		t.Errorf("last: %+v %v %v", last, found, err)
	}
}

// TestRunPrune: the prune loop prunes, after its first interval, what is
// older than the retention (the latest event of a session stays, as Prune keeps it) and
// returns when its context ends.
func TestRunPrune(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openDB(t, "s1")
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newLog(t, db, LogOptions{Now: clock.now})
	for range 3 {
		if _, err := l.Append(ctx, "s1", []New{{Kind: Call}}); err != nil {
			t.Fatal(err)
		}
	}
	clock.set(clock.now().Add(48 * time.Hour))
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.RunPrune(ctx, Retention{Keep: 24 * time.Hour}, 20*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for db.Event.Query().CountX(ctx) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d events after the first prune, want the latest only", db.Event.Query().CountX(ctx))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunPrune did not return after its context ended")
	}
}
