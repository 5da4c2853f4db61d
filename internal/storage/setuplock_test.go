package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestSetupLockExcludes: while one process (here a pool of its own) holds
// a database's setup lock, another's WithSetupLock waits, and runs nothing
// until it is released, however the holder's fn ended (an error too).
func TestSetupLockExcludes(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("on SQLite one process holds the data directory and the lock is none; the PostgreSQL pass runs this")
	}
	loc := dbtest.NewLocation(t)
	a, b := loc.Open(t), loc.Open(t)
	ctx := context.Background()
	for _, holderErr := range []error{nil, errors.New("the holder's migration failed")} {
		held, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- a.WithSetupLock(ctx, func(context.Context) error {
				close(held)
				<-release
				return holderErr
			})
		}()
		<-held
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		ran := false
		err := b.WithSetupLock(short, func(context.Context) error { ran = true; return nil })
		cancel()
		if err == nil || ran {
			t.Errorf("holder ending with %v: a second WithSetupLock while it is held: ran %v, err %v; want it kept waiting", holderErr, ran, err)
		}
		close(release)
		if err := <-done; !errors.Is(err, holderErr) {
			t.Errorf("the holder's WithSetupLock: %v, want its fn's %v", err, holderErr)
		}
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = b.WithSetupLock(wait, func(context.Context) error { ran = true; return nil })
		cancel()
		if err != nil || !ran {
			t.Errorf("holder ending with %v: once released: ran %v, err %v; want it taken", holderErr, ran, err)
		}
	}
}
