package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
)

// On PostgreSQL a test's fresh database is made before the test asks for
// it. CREATE DATABASE took 0.3 s on a quiet machine and 1.1 s on average
// in whatsapp's tests on the PostgreSQL pass (77 of them: 86 s of waiting,
// more than the package's tests spent in their own work), and the server
// makes them one at a time: each test binary keeps its next databases in
// the making while its tests run.
const (
	// ahead is how many fresh databases a test binary keeps made: its
	// tests run two at a time (GOMAXPROCS on CI's two cores).
	ahead = 2
	// abandonedAfter is when a test database is certainly no test's any
	// more: a test binary lives at most the 30 minutes of make test's
	// -timeout. What a binary made ahead and never used (at most ahead
	// databases) is left when it exits, and dropped by a later binary's
	// sweep on the same server.
	abandonedAfter = 2 * time.Hour

	testDatabasePrefix = "wagraph_test_"
)

// freshDB is a database made for a test, and what drops it.
type freshDB struct {
	url  string
	drop func() error
}

// made is what the maker of fresh databases hands over: one, or why it
// could not.
type made struct {
	db  freshDB
	err error
}

// fresh returns a database copied from the server's migrated template,
// extended by ext unless it is the zero Extension, made ahead when it
// could be.
func (tp *template) fresh(server string, ext Extension) (freshDB, error) {
	tmpl, err := tp.postgres(server)
	if err != nil {
		return freshDB{}, fmt.Errorf("the migrated database the tests start from: %w", err)
	}
	if ext.Name != "" {
		if tmpl, err = tp.extended(server, tmpl, ext); err != nil {
			return freshDB{}, fmt.Errorf("the migrated database with %s: %w", ext.Name, err)
		}
	}
	m := <-tp.supply(tmpl)
	return m.db, m.err
}

// supply returns the channel the fresh copies of the template database
// tmpl (of the run's server) arrive on, starting their maker with the
// binary's first request: it makes one database after the other, each
// taken as soon as a test asks. It runs as long as the test binary,
// blocked while ahead databases wait.
func (tp *template) supply(tmpl string) <-chan made {
	tp.pgMu.Lock()
	defer tp.pgMu.Unlock()
	if ch, ok := tp.pgReady[tmpl]; ok {
		return ch
	}
	if tp.pgReady == nil {
		tp.pgReady = make(map[string]chan made)
	}
	ch := make(chan made, ahead-1) // plus the one the maker holds
	tp.pgReady[tmpl] = ch
	go func() {
		for {
			url, drop, err := NewDatabase(tmpl)
			ch <- made{db: freshDB{url: url, drop: drop}, err: err}
			if err != nil {
				time.Sleep(time.Second) // the server refused: the next test asks again, not a loop of failures
			}
		}
	}()
	return ch
}

// testDatabaseName is a new test database's name: when it was made (the
// sweep reads it) and randomness (tests of every package share the
// server at once).
func testDatabaseName(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return testDatabasePrefix + strconv.FormatInt(now.Unix(), 10) + "_" + hex.EncodeToString(b[:])
}

// madeAt reads the time in a test database's name; ok is false for a
// name of another form (one made before names carried it: left alone).
func madeAt(name string) (at time.Time, ok bool) {
	rest, found := strings.CutPrefix(name, testDatabasePrefix)
	if !found {
		return time.Time{}, false
	}
	secs, _, found := strings.Cut(rest, "_")
	if !found {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// sweep drops the server's test databases made longer than
// abandonedAfter ago: those binaries made ahead and never used, or a
// killed test never dropped.
func sweep(server string, now time.Time) error {
	admin, err := sql.Open(storage.PostgresDriver, server)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := admin.QueryContext(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", testDatabasePrefix+"%")
	if err != nil {
		return fmt.Errorf("list the test databases: %w", err)
	}
	var old []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if at, ok := madeAt(name); ok && now.Sub(at) > abandonedAfter {
			old = append(old, name)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, name := range old {
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop abandoned test database %s: %w", name, err)
		}
	}
	return nil
}
