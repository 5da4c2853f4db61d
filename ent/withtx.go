package ent

import (
	"context"
	"fmt"
)

// WithTx runs fn in a transaction of db, committing when fn returns nil
// and rolling back otherwise. (Written by hand: ent generates every other
// file of this package.)
func WithTx(ctx context.Context, db *Client, fn func(*Tx) error) error {
	tx, err := db.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
