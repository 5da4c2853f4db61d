package ent

import (
	"context"
	"fmt"
)

// WithTx runs fn in a transaction of db, committing when fn returns nil
// and rolling back otherwise, also when fn panics: the panic goes on, and
// the transaction does not hold SQLite's write lock (taken at BEGIN with
// _txlock=immediate) until every other writer's busy timeout runs out.
// (Written by hand: ent generates every other file of this package.)
func WithTx(ctx context.Context, db *Client, fn func(*Tx) error) error {
	tx, err := db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// Deferred without recover: a panic (or runtime.Goexit) keeps its own
	// stack while it unwinds past the rollback.
	done := false
	defer func() {
		if !done {
			_ = tx.Rollback()
		}
	}()
	err = fn(tx)
	done = true
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
