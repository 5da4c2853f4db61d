package storage

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/mattn/go-sqlite3"
)

// writerWait is how long a writer waits for its turn: the busy timeout
// of the SQLite file (_busy_timeout, ent.SQLiteDSN), which a writer
// waited in SQLite before the turns were taken here.
const writerWait = 10 * time.Second

// oneWriter is the SQLite driver with its writers taking turns in the
// process: a transaction (every one takes SQLite's write lock at BEGIN,
// _txlock=immediate) and a statement run outside one (an INSERT, UPDATE
// or DELETE: reads are queries) wait here for the writer before them.
// SQLite has one write lock, and a writer that finds it taken sleeps in
// the busy handler (1, 2, 5 … 100 ms) however soon it is free: the event
// log's writer, the dispatcher's claims and its recorder slept so behind
// each other under load, and the server left cores idle while texts
// queued (issue 35). Waiting here, the next writer starts the moment the
// one before it ends. Reads take no turn (WAL: readers never wait for the
// writer). PostgreSQL has no such lock and no turns.
type oneWriter struct {
	*entsql.Driver
	turn chan struct{} // capacity 1: held by the writer
}

func newOneWriter(drv *entsql.Driver) *oneWriter {
	return &oneWriter{Driver: drv, turn: make(chan struct{}, 1)}
}

// take waits for the writer's turn, up to writerWait, and returns its
// release (idempotent). A turn not had in time is SQLite's own answer to
// a write lock held too long: SQLITE_BUSY.
func (w *oneWriter) take(ctx context.Context) (release func(), err error) {
	timer := time.NewTimer(writerWait)
	defer timer.Stop()
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, sqlite3.Error{Code: sqlite3.ErrBusy}
	}
	var once sync.Once
	return func() { once.Do(func() { <-w.turn }) }, nil
}

// Exec runs a statement outside a transaction in the writer's turn.
func (w *oneWriter) Exec(ctx context.Context, query string, args, v any) error {
	release, err := w.take(ctx)
	if err != nil {
		return err
	}
	defer release()
	return w.Driver.Exec(ctx, query, args, v)
}

// ExecContext is Exec for ent's ExecContext (sql/execquery).
func (w *oneWriter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	release, err := w.take(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return w.Driver.ExecContext(ctx, query, args...)
}

// Tx begins a transaction in the writer's turn.
func (w *oneWriter) Tx(ctx context.Context) (dialect.Tx, error) { return w.BeginTx(ctx, nil) }

// BeginTx begins a transaction in the writer's turn, which ends with it:
// at its commit or rollback, or when its context ends (database/sql then
// rolls it back).
func (w *oneWriter) BeginTx(ctx context.Context, opts *entsql.TxOptions) (dialect.Tx, error) {
	release, err := w.take(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := w.Driver.BeginTx(ctx, opts)
	if err != nil {
		release()
		return nil, err
	}
	stop := context.AfterFunc(ctx, release)
	return &writerTx{Tx: tx.(*entsql.Tx), release: func() { stop(); release() }}, nil
}

// writerTx is a transaction holding the writer's turn.
type writerTx struct {
	*entsql.Tx
	release func()
}

func (t *writerTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *writerTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}
