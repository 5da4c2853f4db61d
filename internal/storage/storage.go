// Package storage opens the product's database: SQLite in the data
// directory (the default, one process, nothing to set up) or PostgreSQL
// at a postgres:// URL (--database-url). Both hold the same ent schema,
// brought up to date on open; the rest of the product sees an *ent.Client
// and does not ask which engine is behind it, except where a query must
// differ (Dialect).
package storage

import (
	"context"
	"database/sql"
	"fmt"
	neturl "net/url"
	"path/filepath"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of PostgreSQL
	_ "github.com/mattn/go-sqlite3"    // the "sqlite3" driver

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/datadir"
)

// PostgresDriver is the database/sql driver of PostgreSQL URLs (pgx's
// stdlib adapter).
const PostgresDriver = "pgx"

// The SQLite pool: at most sqliteOpenConns connections. Each holds its
// own page cache (at most SQLite's default 2 MB, filled only by pages
// read) and its prepared statements, so the bound bounds them too: open
// without one, the pool grew with every burst of concurrent readers and
// writers (the soak's RSS grew outside Go's heap, issue 35). 16 is more
// than two cores run queries at once; a request beyond them waits for a
// connection rather than opening one. All of them stay idle (none is
// closed on release and opened again: an open reads the schema, and the
// prepared statements go with a connection, 4% of a request's CPU under
// goal 1's 64 connections); past a burst they close after idleTime.
const (
	sqliteOpenConns = 16
	idleTime        = time.Minute
)

// PostgreSQL pool: every connection is a server process, so the pool is
// bounded (unlike SQLite's, where an open connection costs a file handle);
// 32 covers the load program's concurrency. A server's default
// max_connections is 100, shared by every process of a cluster.
const (
	postgresOpenConns = 32
	postgresIdleConns = 16
)

// DB is an open product database.
type DB struct {
	SQL     *sql.DB
	Ent     *ent.Client
	Dialect string // dialect.SQLite or dialect.Postgres
	// Where names the database in errors and logs: the SQLite file, or the
	// PostgreSQL host and database (never the URL: it may hold a password).
	Where string
}

// Close closes the ent client and its pool.
func (d *DB) Close() error { return d.Ent.Close() }

// Open opens the database at url when it is set (a postgres:// URL), or
// else the SQLite file wagraph.db in dataDir (created with the directory
// when missing), and migrates its schema (migrate.go).
func Open(ctx context.Context, dataDir, url string) (*DB, error) {
	var (
		d   *DB
		err error
	)
	if url != "" {
		d, err = openPostgres(ctx, url)
	} else {
		d, err = openSQLite(ctx, dataDir)
	}
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, d); err != nil {
		d.SQL.Close()
		return nil, fmt.Errorf("migrate %s: %w", d.Where, err)
	}
	return d, nil
}

func openSQLite(ctx context.Context, dataDir string) (*DB, error) {
	// SQLite reports a directory it may not write in as "unable to open
	// database file: no such file or directory": the cause is found and
	// said first.
	if err := datadir.Prepare(dataDir); err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, datadir.ProductDB)
	// Created private before SQLite opens it: SQLite makes its files 0644
	// less the umask, its -wal and -shm with the database file's mode.
	if err := datadir.PrivateSQLite(path); err != nil {
		return nil, err
	}
	sqlDB, err := sql.Open("sqlite3", ent.SQLiteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Bounded: a writer waits for its turn (writer.go) holding no
	// connection, so the writer holding SQLite's lock always gets one as
	// soon as a reader ends (before the turns, a writer waited on the
	// lock holding its connection, and a bound could have starved the
	// lock's holder of a second one).
	sqlDB.SetMaxOpenConns(sqliteOpenConns)
	sqlDB.SetMaxIdleConns(sqliteOpenConns)
	sqlDB.SetConnMaxIdleTime(idleTime)
	d, err := finish(ctx, sqlDB, dialect.SQLite, path)
	if err != nil {
		return nil, err
	}
	// The -wal and -shm the first connection made, set explicitly.
	if err := datadir.PrivateSQLite(path); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func openPostgres(ctx context.Context, url string) (*DB, error) {
	where := PostgresWhere(url)
	sqlDB, err := sql.Open(PostgresDriver, url)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL database %s: %w", where, err)
	}
	sqlDB.SetMaxOpenConns(postgresOpenConns)
	sqlDB.SetMaxIdleConns(postgresIdleConns)
	sqlDB.SetConnMaxIdleTime(idleTime)
	return finish(ctx, sqlDB, dialect.Postgres, where)
}

func finish(ctx context.Context, sqlDB *sql.DB, dia, where string) (*DB, error) {
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	var drv dialect.Driver = entsql.OpenDB(dia, sqlDB)
	if dia == dialect.SQLite {
		drv = newOneWriter(entsql.OpenDB(dia, sqlDB))
	}
	client := ent.NewClient(ent.Driver(drv))
	return &DB{SQL: sqlDB, Ent: client, Dialect: dia, Where: where}, nil
}

// PostgresWhere names the database of a postgres:// URL for messages: host,
// port and database, without the user or password.
func PostgresWhere(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return "PostgreSQL (an unreadable URL)"
	}
	return "PostgreSQL " + u.Host + u.Path
}
