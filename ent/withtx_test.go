package ent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
)

var errRefused = errors.New("refused")

// TestWithTx: WithTx commits what fn wrote when it returns nil, and rolls it
// back when it fails or panics (the panic reaching the caller); in every
// case the write lock is free at once afterwards: the next write
// transaction, given far less time than the busy timeout, succeeds. The
// database is the product's, on the run's backend (internal/dbtest); the
// lock is SQLite's (with the app's settings it is taken at BEGIN, and a
// writer waits up to 10 s for it): on PostgreSQL, where a writer of other
// rows does not wait, the test shows what is committed and what is not.
func TestWithTx(t *testing.T) {
	db := dbtest.Open(t).Ent
	ctx := context.Background()

	tests := []struct {
		name      string
		outcome   func() error // what fn does after its write
		wantErr   error
		wantPanic any
		kept      bool // the write is committed
	}{
		{"fn returns nil", func() error { return nil }, nil, nil, true},
		{"fn fails", func() error { return errRefused }, errRefused, nil, false},
		{"fn panics", func() error { panic("fn broke") }, nil, "fn broke", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "u" + string(rune('0'+i))
			var err error
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				err = ent.WithTx(ctx, db, func(tx *ent.Tx) error {
					if err := tx.User.Create().SetID(id).SetName("n").Exec(ctx); err != nil {
						t.Errorf("write in the transaction: %v", err)
					}
					return tt.outcome()
				})
			}()
			if recovered != tt.wantPanic {
				t.Fatalf("panic %v reached the caller, want %v", recovered, tt.wantPanic)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WithTx: %v, want %v", err, tt.wantErr)
			}

			// Were the lock still held, this would wait for it and fail: at
			// the deadline, or when the driver does not heed the context
			// during its busy wait, at the busy timeout.
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			next := id + "-next"
			if err := ent.WithTx(wctx, db, func(tx *ent.Tx) error {
				return tx.User.Create().SetID(next).SetName("n").Exec(wctx)
			}); err != nil {
				t.Fatalf("the next write transaction: %v", err)
			}
			if _, err := db.User.Get(ctx, next); err != nil {
				t.Errorf("the next write is not stored: %v", err)
			}
			if _, err := db.User.Get(ctx, id); (err == nil) != tt.kept {
				t.Errorf("the write of fn: kept %v (err %v), want kept %v", err == nil, err, tt.kept)
			}
		})
	}
}
