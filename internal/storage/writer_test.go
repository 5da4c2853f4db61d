package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
)

// TestSQLiteWritersTakeTurns (issue 35): on SQLite, writers wait for the
// writer before them in the process, not in SQLite's busy handler: while
// one transaction is open, the other writers (transactions and statements
// outside one) hold no connection and write nothing, and they all write,
// in turn, once it ends. A writer that waited in SQLite held a connection
// (its page cache with it) and slept after the lock was free. A turn
// that does not come within its context's time is that context's error;
// a transaction whose context ends gives its turn back.
func TestSQLiteWritersTakeTurns(t *testing.T) {
	ctx := context.Background()
	d, err := storage.Open(ctx, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Ent.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.User.Create().SetID("u0").SetName("first").ExecX(ctx)
	const writers = 6
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("u%d", i+1)
			if i%2 == 0 {
				errs[i] = d.Ent.User.Create().SetID(id).SetName("plain").Exec(ctx)
				return
			}
			wtx, err := d.Ent.Tx(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			if err := wtx.User.Create().SetID(id).SetName("tx").Exec(ctx); err != nil {
				_ = wtx.Rollback()
				errs[i] = err
				return
			}
			errs[i] = wtx.Commit()
		})
	}
	time.Sleep(200 * time.Millisecond) // the writers are all waiting by now
	if inUse := d.SQL.Stats().InUse; inUse != 1 {
		t.Errorf("%d connections in use while one transaction is open and %d writers wait, want 1 (the transaction's)", inUse, writers)
	}
	if n := d.Ent.User.Query().CountX(ctx); n != 0 {
		t.Errorf("%d users visible before the first transaction commits, want 0", n)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := d.Ent.User.Create().SetID("late").SetName("late").Exec(short); err == nil {
		t.Error("a write whose context ended before its turn succeeded")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if n := d.Ent.User.Query().CountX(ctx); n != writers+1 {
		t.Errorf("%d users, want %d", n, writers+1)
	}

	// A transaction abandoned with its context gives its turn back.
	gone, cancel := context.WithCancel(ctx)
	if _, err := d.Ent.Tx(gone); err != nil {
		t.Fatal(err)
	}
	cancel()
	next, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if err := d.Ent.User.Create().SetID("after").SetName("after").Exec(next); err != nil {
		t.Errorf("a write after a transaction's context ended: %v", err)
	}
}
