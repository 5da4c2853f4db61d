package storage_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// TestSQLitePoolBounded (issue 35): on SQLite the pool never opens more
// than storage.SQLiteOpenConns connections, however many readers and
// writers come at once (each connection keeps its own page cache: the
// soak's RSS grew with them), and all of them still get through: readers
// wait for a connection, writers for their turn holding none.
func TestSQLitePoolBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := storage.Open(ctx, t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := d.SQL.Stats().MaxOpenConnections; got != storage.SQLiteOpenConns {
		t.Errorf("the pool's bound is %d, want %d", got, storage.SQLiteOpenConns)
	}
	const readers, writers = 4 * storage.SQLiteOpenConns, 8
	var most atomic.Int64
	sampled := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			most.Store(max(most.Load(), int64(d.SQL.Stats().OpenConnections)))
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, readers+writers)
	for i := range readers {
		wg.Go(func() {
			// A read that keeps its connection a while, as a request
			// paging through rows does.
			rows, err := d.SQL.QueryContext(ctx, "SELECT ?", i)
			if err != nil {
				errs <- fmt.Errorf("reader %d: %w", i, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
			for rows.Next() {
			}
			if err := rows.Close(); err != nil {
				errs <- fmt.Errorf("reader %d: %w", i, err)
			}
		})
	}
	for i := range writers {
		wg.Go(func() {
			tx, err := d.Ent.Tx(ctx)
			if err != nil {
				errs <- fmt.Errorf("writer %d: %w", i, err)
				return
			}
			if err := tx.User.Create().SetID(fmt.Sprintf("w%d", i)).SetName("w").Exec(ctx); err != nil {
				_ = tx.Rollback()
				errs <- fmt.Errorf("writer %d: %w", i, err)
				return
			}
			// A read outside the transaction, while holding it: the
			// transaction's holder needs a second connection.
			if _, err := d.Ent.User.Query().Count(ctx); err != nil {
				_ = tx.Rollback()
				errs <- fmt.Errorf("writer %d: read beside its transaction: %w", i, err)
				return
			}
			if err := tx.Commit(); err != nil {
				errs <- fmt.Errorf("writer %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := most.Load(); n > storage.SQLiteOpenConns {
		t.Errorf("%d connections open at once under %d readers and %d writers, want at most %d", n, readers, writers, storage.SQLiteOpenConns)
	}
	if n := d.Ent.User.Query().CountX(ctx); n != writers {
		t.Errorf("%d users, want %d", n, writers)
	}
}
