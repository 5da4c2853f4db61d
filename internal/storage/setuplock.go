package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
)

// setupLockKey names the setup lock among the database's advisory locks
// ("wagraph" in ASCII). Advisory locks belong to one database, so it can
// only meet another program's lock of the same number in wagraph's own
// database.
const setupLockKey int64 = 0x77616772617068

// unlockTimeout bounds the release of the setup lock, which runs even when
// the caller's context has ended.
const unlockTimeout = 5 * time.Second

// WithSetupLock runs fn while this process holds the database's setup
// lock: on PostgreSQL a session advisory lock, so that the processes of a
// cluster started at once on an empty database take turns to create its
// tables (the product's migration, whatsmeow's device store) rather than
// each create them and all but one die on a table another just made
// (23505 on pg_type). fn re-reads what it would create once it holds the
// lock: another process may have created it meanwhile. On SQLite fn just
// runs: one process holds a data directory (internal/datadir).
//
// The lock is taken on a connection of its own, held until fn returns,
// and released even when ctx has ended; a connection whose release is in
// doubt is closed rather than returned to the pool, where it would keep
// the lock (the server releases a session's locks when it ends).
func (d *DB) WithSetupLock(ctx context.Context, fn func(context.Context) error) error {
	if d.Dialect != dialect.Postgres {
		return fn(ctx)
	}
	conn, err := d.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("take the setup lock of %s: %w", d.Where, err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", setupLockKey); err != nil {
		discard(conn) // a lock granted as the wait was cancelled stays with its session
		return fmt.Errorf("take the setup lock of %s: %w", d.Where, err)
	}
	defer unlock(conn)
	return fn(ctx)
}

// unlock releases the setup lock held by conn and gives conn back to the
// pool, or closes it when the release failed.
func unlock(conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	var released bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", setupLockKey).Scan(&released); err != nil || !released {
		discard(conn)
		return
	}
	conn.Close()
}

// discard closes conn's connection instead of returning it to the pool:
// database/sql drops a connection its Raw callback calls bad.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}
