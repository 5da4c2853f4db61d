package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/storage"
)

// sqliteFile is the SQLite database's file in a data directory
// (internal/storage).
const sqliteFile = datadir.ProductDB

// templates are the migrated databases a test binary copies for each test:
// the schema is migrated once per binary (per schema version, on a
// PostgreSQL server) rather than once per test. Migrating is most of the
// cost of a fresh database, and ent's migration writes to the ent package's
// shared table descriptions, so tests that start servers in parallel must
// not each migrate: a database copied from a template records its schema
// version, and storage.Open leaves it as it is.
//
// It is the one value the tests of a binary share; each part is made once,
// by the first test that needs it, and only read after.
var templates template

type template struct {
	sqliteOnce sync.Once
	sqliteFile []byte
	sqliteErr  error

	pgMu    sync.Mutex
	pgName  map[string]string    // server URL → template database
	pgExt   map[string]string    // server URL, extension → template database (Extension)
	pgReady map[string]chan made // template database → fresh copies made ahead (fresh.go)
}

// An Extension is what a package's tests add to the migrated database
// before each of their tests gets a copy: whatsmeow's device store, which
// the server creates at its start (half a second on PostgreSQL per test
// otherwise). It is made once per PostgreSQL server, like the migrated
// template, and kept there under Name: a Name says the version of what
// Build makes, so a server kept across runs never hands out an older one.
type Extension struct {
	Name  string // a database name's part: lower-case letters, digits and _
	Build func(ctx context.Context, url string) error
}

// extended returns the template database that is base extended by ext on
// server: made under a name of its own and renamed when complete, as
// migratedPostgres does.
func (tp *template) extended(server, base string, ext Extension) (string, error) {
	key := server + "\x00" + ext.Name
	tp.pgMu.Lock()
	defer tp.pgMu.Unlock()
	if name, ok := tp.pgExt[key]; ok {
		return name, nil
	}
	name := base + "_" + ext.Name
	exists, err := adminExists(server, name)
	if err != nil {
		return "", err
	}
	if !exists {
		url, drop, err := NewDatabase(base)
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = ext.Build(ctx, url)
		cancel()
		if err == nil {
			err = adminExec(server, "ALTER DATABASE "+DatabaseName(url)+" RENAME TO "+name)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42P04" {
			err = nil // another binary's was renamed first: the same
		}
		_ = drop() // the copy, when it was not renamed
		if err != nil {
			return "", err
		}
	}
	if tp.pgExt == nil {
		tp.pgExt = make(map[string]string)
	}
	tp.pgExt[key] = name
	return name, nil
}

// sqlite returns the bytes of a migrated SQLite database file.
func (tp *template) sqlite() ([]byte, error) {
	tp.sqliteOnce.Do(func() { tp.sqliteFile, tp.sqliteErr = migratedSQLite() })
	return tp.sqliteFile, tp.sqliteErr
}

func migratedSQLite() ([]byte, error) {
	dir, err := os.MkdirTemp("", "wagraph-dbtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := storage.Open(ctx, dir, "")
	if err != nil {
		return nil, err
	}
	// The whole database in its one file: the WAL folded into it.
	_, err = d.SQL.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, sqliteFile))
}

// postgres returns the name of a migrated database on server to create
// test databases from. It is named for the schema version and kept on the
// server, so every test binary of a run (and of later runs on the same
// server) shares it: made under a name of its own and renamed when
// complete, so no binary copies a half-migrated one.
func (tp *template) postgres(server string) (string, error) {
	tp.pgMu.Lock()
	defer tp.pgMu.Unlock()
	if name, ok := tp.pgName[server]; ok {
		return name, nil
	}
	name, err := migratedPostgres(server)
	if err != nil {
		return "", err
	}
	// Once per binary and server: what earlier binaries abandoned goes.
	if err := sweep(server, time.Now()); err != nil {
		return "", err
	}
	if tp.pgName == nil {
		tp.pgName = make(map[string]string)
	}
	tp.pgName[server] = name
	return name, nil
}

func migratedPostgres(server string) (string, error) {
	name := "wagraph_template_" + ent.SchemaVersion()[:16]
	exists, err := adminExists(server, name)
	if err != nil || exists {
		return name, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	building := name + "_" + hex.EncodeToString(b[:])
	if err := adminExec(server, "CREATE DATABASE "+building); err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	u, err := neturl.Parse(server)
	if err != nil {
		return "", fmt.Errorf("%s: not a URL", ServerEnv)
	}
	u.Path = "/" + building
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := storage.Open(ctx, "", u.String())
	if err == nil {
		err = d.Close()
	}
	if err == nil {
		err = adminExec(server, "ALTER DATABASE "+building+" RENAME TO "+name)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P04" {
		err = nil // another binary's template was renamed first: the same schema
	}
	if err != nil {
		_ = adminExec(server, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
		return "", fmt.Errorf("migrate: %w", err)
	}
	_ = adminExec(server, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
	return name, nil
}

// adminExists reports whether the server has a database called name.
func adminExists(server, name string) (bool, error) {
	admin, err := sql.Open(storage.PostgresDriver, server)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
