// Package dbtest gives each storage test a fresh product database on the
// backend the test run is for: SQLite in the test's temporary directory
// (the default), or, when WAGRAPH_TEST_BACKEND=postgres, a PostgreSQL
// database created for the test on the server at WAGRAPH_TEST_POSTGRES and
// dropped when the test ends.
//
// `make test` runs the whole suite on SQLite, then, when
// WAGRAPH_TEST_POSTGRES is set (.ci/postgres.sh starts a throwaway server
// and sets it), the whole suite a second time with
// WAGRAPH_TEST_BACKEND=postgres: every test that stores anything takes its
// database from here (directly, through internal/apptest, or as the
// --database-url of a server process it starts), including whatsmeow's
// device stores of the whatsapp tests. A second pass rather than a subtest
// per backend, so each test runs unchanged under its own name, processes a
// test starts (the server binary, the crash test's child) inherit the
// backend through the environment, and the output says which backend a
// failure is on. A test whose subject no backend changes (a generated
// client, a browser, a memory bound) says so with OneBackend and runs on
// the SQLite pass alone.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
)

// The environment of a test run.
const (
	// ServerEnv is a postgres:// URL of a server the tests may create and
	// drop databases on (its user needs CREATEDB).
	ServerEnv = "WAGRAPH_TEST_POSTGRES"
	// BackendEnv selects the backend: "postgres" or "sqlite" (empty).
	BackendEnv = "WAGRAPH_TEST_BACKEND"
)

// Postgres reports whether this run's tests are on PostgreSQL; it fails the
// test when the run asks for PostgreSQL without naming a server, or names
// an unknown backend, so a misconfigured run cannot pass on SQLite.
func Postgres(t testing.TB) bool {
	t.Helper()
	switch b := os.Getenv(BackendEnv); b {
	case "", "sqlite":
		return false
	case "postgres":
		if os.Getenv(ServerEnv) == "" {
			t.Fatalf("%s=postgres needs %s, the URL of a PostgreSQL server (.ci/postgres.sh starts one)", BackendEnv, ServerEnv)
		}
		return true
	default:
		t.Fatalf("%s=%q: want postgres or sqlite", BackendEnv, b)
		return false
	}
}

// OneBackend marks a test whose subject is the same whatever stores the
// data (a contract's shape checked by its generated clients and linters,
// the dashboard in a browser, a memory bound of a request's body): it runs
// on the SQLite pass and is skipped on the PostgreSQL pass, where it would
// run the same checks against the same code again at about twice the time
// (the packages it shares that pass with are the heaviest). why says what
// the test checks and where its storage is tested on both backends.
func OneBackend(t testing.TB, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("dbtest.OneBackend: say why the backend does not matter to this test")
	}
	if Postgres(t) {
		t.Skip("run on the SQLite pass only: " + why)
	}
}

// DatabaseURL is the --database-url of a test server: on PostgreSQL a
// fresh database's URL (dropped when the test ends), on SQLite "" (the
// server's data directory holds its database).
func DatabaseURL(t testing.TB) string {
	t.Helper()
	if !Postgres(t) {
		return ""
	}
	return createDatabase(t, Extension{})
}

// DatabaseURLWith is DatabaseURL with ext's additions in the database.
func DatabaseURLWith(t testing.TB, ext Extension) string {
	t.Helper()
	if !Postgres(t) {
		return ""
	}
	return createDatabase(t, ext)
}

// Location is where a test's database lives: a data directory (SQLite's
// wagraph.db) and, on PostgreSQL, the URL of its database.
type Location struct {
	DataDir string
	URL     string
}

// NewLocation returns a fresh location of the run's backend: a temporary
// directory, and on PostgreSQL a new database (dropped when the test ends).
func NewLocation(t testing.TB) Location {
	t.Helper()
	return Location{DataDir: DataDir(t), URL: DatabaseURL(t)}
}

// DataDir is a fresh data directory for a test's server or database. On
// SQLite it holds a copy of the test binary's migrated database (see
// template), so the server opening it finds its schema in place.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if Postgres(t) {
		return dir
	}
	if err := SeedSQLite(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SeedSQLite writes the test binary's migrated SQLite database into the
// data directory dir.
func SeedSQLite(dir string) error {
	file, err := templates.sqlite()
	if err != nil {
		return fmt.Errorf("the migrated SQLite database the tests start from: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, sqliteFile), file, 0o600); err != nil {
		return fmt.Errorf("copy the migrated SQLite database: %w", err)
	}
	return nil
}

// PostgresTemplate is the migrated database on the run's PostgreSQL
// server that test databases are copied from (NewDatabase's source).
func PostgresTemplate() (string, error) {
	return templates.postgres(os.Getenv(ServerEnv))
}

// Open opens the database at l (creating it on SQLite) with its schema,
// closed when the test ends; a test may open it again after closing it.
func (l Location) Open(t testing.TB) *storage.DB {
	t.Helper()
	d, err := storage.Open(context.Background(), l.DataDir, l.URL)
	if err != nil {
		t.Fatalf("open the test database: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Open returns a fresh product database with its schema, closed when the
// test ends: SQLite in a temporary directory, or a new PostgreSQL database.
func Open(t testing.TB) *storage.DB {
	t.Helper()
	return NewLocation(t).Open(t)
}

// createDatabase takes a database copied from the migrated template (see
// template.go), extended by ext, made ahead of the test, and drops it at
// cleanup.
func createDatabase(t testing.TB, ext Extension) string {
	t.Helper()
	server := os.Getenv(ServerEnv)
	db, err := templates.fresh(server, ext)
	if err != nil {
		t.Fatalf("a fresh PostgreSQL database copied from the migrated one the tests start from, on %s: %v", storage.PostgresWhere(server), err)
	}
	t.Cleanup(func() {
		if err := db.drop(); err != nil {
			t.Error(err)
		}
	})
	return db.url
}

// CopyDatabase is a fresh PostgreSQL database of the run's server copied
// from the database source (on no connection at the time), dropped when
// the test ends; its URL is returned.
func CopyDatabase(t testing.TB, source string) string {
	t.Helper()
	url, drop, err := NewDatabase(source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return url
}

// NewDatabase creates a database on the run's PostgreSQL server, named for
// nothing but randomness (tests of every package share the server at
// once), copied from the database source, and returns its URL and what
// drops it. For what outlives one test (internal/apptest's linked
// session); a test takes CopyDatabase. The server connection it takes is
// closed in between: nothing holds a connection of its own beyond the
// database's, and no pool (nor its goroutine) is left behind.
func NewDatabase(source string) (url string, drop func() error, err error) {
	server := os.Getenv(ServerEnv)
	u, err := neturl.Parse(server)
	if err != nil || server == "" {
		return "", nil, fmt.Errorf("%s: not a URL", ServerEnv)
	}
	name := testDatabaseName(time.Now())
	if err := adminExec(server, "CREATE DATABASE "+name+" TEMPLATE "+source); err != nil {
		return "", nil, fmt.Errorf("create a test database on %s: %w", storage.PostgresWhere(server), err)
	}
	drop = func() error {
		// FORCE: a pool left open (a server stopped uncleanly on purpose)
		// must not keep the database alive.
		if err := adminExec(server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop test database %s: %w", name, err)
		}
		return nil
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// DatabaseName is the database of a postgres:// URL.
func DatabaseName(url string) string {
	u, err := neturl.Parse(url)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

// adminExec runs one statement on the server's maintenance database over a
// connection of its own.
func adminExec(server, stmt string) error {
	admin, err := sql.Open(storage.PostgresDriver, server)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = admin.ExecContext(ctx, stmt)
	return err
}
