package storage_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestProbeHealthy: on the run's backend a probe of a healthy database
// passes and writes once; a second check within Every shares the result
// without writing, one after it writes again.
func TestProbeHealthy(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t)
	p := storage.NewProbe(d)
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	p.Now = clock.Now
	for i, tt := range []struct {
		advance time.Duration
		writes  int64
	}{
		{0, 1},
		{500 * time.Millisecond, 1}, // within Every: shared
		{500 * time.Millisecond, 2}, // a second after the first: written
		{0, 2},
	} {
		clock.Advance(tt.advance)
		if err := p.Check(ctx); err != nil {
			t.Fatalf("check %d of a healthy %s database: %v", i, d.Dialect, err)
		}
		if n, err := p.Writes(ctx); err != nil || n != tt.writes {
			t.Errorf("after check %d: %d writes (%v), want %d", i, n, err, tt.writes)
		}
	}
	// A second probe (another process) finds the table and row in place.
	other := storage.NewProbe(d)
	if err := other.Check(ctx); err != nil {
		t.Fatalf("a second probe: %v", err)
	}
	if n, _ := other.Writes(ctx); n != 3 {
		t.Errorf("%d writes after a second probe's, want 3", n)
	}
}

// TestProbeSQLiteFull: SQLite answering SQLITE_FULL for real (its page
// count capped where it stands) is named full, with SQLite's error kept.
func TestProbeSQLiteFull(t *testing.T) {
	if dbtest.Postgres(t) {
		t.Skip("SQLite's page cap; PostgreSQL's disk_full is in TestProbeClassify")
	}
	ctx := context.Background()
	d := dbtest.Open(t)
	// max_page_count belongs to a connection: the pool keeps just one.
	d.SQL.SetMaxOpenConns(1)
	var pages int64
	if err := d.SQL.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SQL.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	err := storage.NewProbe(d).Check(ctx)
	if k := storage.KindOf(err); k != storage.ProbeFull {
		t.Fatalf("probe of a full SQLite database: %v (kind %q), want full", err, k)
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrFull {
		t.Errorf("probe error %v does not keep SQLite's SQLITE_FULL", err)
	}
}

// TestProbeFloor: on SQLite, free space below the floor is full without
// a write (a WAL reused after a checkpoint lets a small write succeed on a
// full disk); at the floor the probe writes and passes; a failed statfs
// is a failure of its own.
func TestProbeFloor(t *testing.T) {
	if dbtest.Postgres(t) {
		t.Skip("the free-space floor is SQLite's: PostgreSQL's disk is the server's")
	}
	ctx := context.Background()
	d := dbtest.Open(t)
	for _, tt := range []struct {
		name   string
		free   uint64
		err    error
		want   storage.ProbeKind
		writes int64
	}{
		{"below the floor", storage.DefaultProbeFloor - 1, nil, storage.ProbeFull, 0},
		{"none", 0, nil, storage.ProbeFull, 0},
		{"statfs fails", 0, syscall.EIO, storage.ProbeFailed, 0},
		{"at the floor", storage.DefaultProbeFloor, nil, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := storage.NewProbe(d)
			var asked string
			p.FreeSpace = func(dir string) (uint64, error) { asked = dir; return tt.free, tt.err }
			err := p.Check(ctx)
			if k := storage.KindOf(err); k != tt.want {
				t.Errorf("free %d (%v): %v (kind %q), want %q", tt.free, tt.err, err, k, tt.want)
			}
			if want := filepath.Dir(d.Where); asked != want {
				t.Errorf("free space asked of %q, want the database's directory %q", asked, want)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("%v does not keep the cause %v", err, tt.err)
			}
			if n, _ := p.Writes(ctx); n != tt.writes {
				t.Errorf("%d writes, want %d", n, tt.writes)
			}
		})
	}
	// The real statfs of the test's directory is above the floor.
	if err := storage.NewProbe(d).Check(ctx); err != nil {
		t.Errorf("statfs of %s: %v", d.Where, err)
	}
}

// TestProbeClosed: a probe of a closed pool is unreachable, today's
// /readyz answer for a database it cannot reach, at once: the healthy
// result of a moment before is not shared past the pool's close.
func TestProbeClosed(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t)
	p := storage.NewProbe(d)
	if err := p.Check(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := p.Check(ctx); storage.KindOf(err) != storage.ProbeUnreachable {
		t.Errorf("probe of a closed database: %v, want unreachable", err)
	}
}

// TestProbeUnreachablePostgres: a PostgreSQL server that refuses the
// connection (nothing listens on port 1) is unreachable, through pgx.
func TestProbeUnreachablePostgres(t *testing.T) {
	db, err := sql.Open(storage.PostgresDriver, "postgres://wagraph@127.0.0.1:1/wagraph?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = storage.NewProbe(&storage.DB{SQL: db, Dialect: dialect.Postgres, Where: "PostgreSQL 127.0.0.1:1/wagraph"}).Check(context.Background())
	if storage.KindOf(err) != storage.ProbeUnreachable || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("probe of a refused PostgreSQL: %v (kind %q), want unreachable with ECONNREFUSED", err, storage.KindOf(err))
	}
}

// TestProbeClassify: each failure a database driver reports is named by
// its kind, the cause kept. PostgreSQL's full disk cannot be made in a
// unit test: its SQLSTATE comes from a driver that answers it.
func TestProbeClassify(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Severity: "ERROR", Code: code, Message: "x"} }
	for _, tt := range []struct {
		name string
		err  error
		want storage.ProbeKind
	}{
		{"SQLITE_FULL", sqlite3.Error{Code: sqlite3.ErrFull}, storage.ProbeFull},
		{"SQLITE_READONLY", sqlite3.Error{Code: sqlite3.ErrReadonly}, storage.ProbeReadOnly},
		{"SQLITE_BUSY", sqlite3.Error{Code: sqlite3.ErrBusy}, storage.ProbeTimeout},
		{"SQLITE_IOERR", sqlite3.Error{Code: sqlite3.ErrIoErr}, storage.ProbeFailed},
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), storage.ProbeFull},
		{"EROFS", fmt.Errorf("write: %w", syscall.EROFS), storage.ProbeReadOnly},
		{"53100 disk_full", pg("53100"), storage.ProbeFull},
		{"25006 read_only_sql_transaction", pg("25006"), storage.ProbeReadOnly},
		{"57014 query_canceled", pg("57014"), storage.ProbeTimeout},
		{"57P01 admin_shutdown", pg("57P01"), storage.ProbeUnreachable},
		{"57P02 crash_shutdown", pg("57P02"), storage.ProbeUnreachable},
		{"57P03 cannot_connect_now", pg("57P03"), storage.ProbeUnreachable},
		{"08006 connection_failure", pg("08006"), storage.ProbeUnreachable},
		{"53300 too_many_connections", pg("53300"), storage.ProbeUnreachable},
		{"42501 insufficient_privilege", pg("42501"), storage.ProbeFailed},
		{"23505 on the upsert", pg("23505"), storage.ProbeFailed},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), storage.ProbeUnreachable},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), storage.ProbeUnreachable},
		{"unexpected EOF", io.ErrUnexpectedEOF, storage.ProbeUnreachable},
		{"deadline", fmt.Errorf("exec: %w", context.DeadlineExceeded), storage.ProbeTimeout},
		{"other", errors.New("something else"), storage.ProbeFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The table exists: the upsert is what fails.
			drv := &fakeDriver{fail: func(query string) error {
				if query[:6] == "CREATE" {
					return nil
				}
				return tt.err
			}}
			p := storage.NewProbe(&storage.DB{SQL: sql.OpenDB(drv), Dialect: dialect.Postgres, Where: "fake"})
			err := p.Check(context.Background())
			if k := storage.KindOf(err); k != tt.want {
				t.Errorf("%v: kind %q, want %q", err, k, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("%v does not keep its cause %v", err, tt.err)
			}
		})
	}
}

// TestProbeTimeout: a write that outlasts the probe's deadline is
// timeout, and the probe returns at its deadline.
func TestProbeTimeout(t *testing.T) {
	drv := &fakeDriver{block: make(chan struct{})} // never released: every write waits for its context
	p := storage.NewProbe(&storage.DB{SQL: sql.OpenDB(drv), Dialect: dialect.Postgres, Where: "fake"})
	p.Timeout = 50 * time.Millisecond
	if err := p.Check(context.Background()); storage.KindOf(err) != storage.ProbeTimeout {
		t.Errorf("a write past the deadline: %v, want timeout", err)
	}
}

// TestProbeSingleFlight: callers arriving while a probe writes wait for
// it and share its result; callers within Every of its start share it
// too: a flood of checks is one write. A caller that gives up waiting is
// told timeout without stopping the write the others wait for.
func TestProbeSingleFlight(t *testing.T) {
	drv := &fakeDriver{block: make(chan struct{})}
	p := storage.NewProbe(&storage.DB{SQL: sql.OpenDB(drv), Dialect: dialect.Postgres, Where: "fake"})
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	p.Now = clock.Now

	first := make(chan error, 1)
	go func() { first <- p.Check(context.Background()) }()
	for drv.execs.Load() == 0 { // the first caller's write is under way
		time.Sleep(time.Millisecond)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Check(gone); storage.KindOf(err) != storage.ProbeTimeout {
		t.Errorf("a caller gone while it waited: %v, want timeout", err)
	}
	const callers = 100
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() { errs <- p.Check(context.Background()) })
	}
	time.Sleep(20 * time.Millisecond) // let them queue behind the write
	close(drv.block)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a caller sharing the probe: %v", err)
		}
	}
	if err := <-first; err != nil {
		t.Errorf("the first caller: %v", err)
	}
	// The first probe: its CREATE and its upsert.
	if n := drv.execs.Load(); n != 2 {
		t.Errorf("%d statements for %d concurrent checks, want 2 (one probe)", n, callers+2)
	}
	clock.Advance(999 * time.Millisecond)
	if err := p.Check(context.Background()); err != nil || drv.execs.Load() != 2 {
		t.Errorf("a check within a second: %v, %d statements; want the shared result, 2", err, drv.execs.Load())
	}
	clock.Advance(time.Millisecond)
	if err := p.Check(context.Background()); err != nil || drv.execs.Load() != 3 {
		t.Errorf("a check a second later: %v, %d statements; want a new upsert, 3", err, drv.execs.Load())
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// fakeDriver is a database whose statements fail as fail says, or wait
// for block to close (or their context), and are counted.
type fakeDriver struct {
	fail  func(query string) error
	block chan struct{}
	execs atomic.Int64
}

func (f *fakeDriver) Connect(context.Context) (driver.Conn, error) { return fakeConn{f}, nil }
func (f *fakeDriver) Driver() driver.Driver                        { return nil }

type fakeConn struct{ f *fakeDriver }

func (c fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("not supported") }
func (c fakeConn) Close() error                        { return nil }
func (c fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("not supported") }

func (c fakeConn) ExecContext(ctx context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	c.f.execs.Add(1)
	if c.f.block != nil {
		select {
		case <-c.f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.f.fail != nil {
		if err := c.f.fail(query); err != nil {
			return nil, err
		}
	}
	return driver.RowsAffected(1), nil
}
