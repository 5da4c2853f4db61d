package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// ProbeKind names why the database cannot take writes, in the words
// /readyz answers with.
type ProbeKind string

// The kinds of a failed write probe.
const (
	// ProbeFull: no room to write (SQLITE_FULL, ENOSPC, PostgreSQL's
	// 53100 disk_full, or SQLite's filesystem below the free-space floor).
	ProbeFull ProbeKind = "full"
	// ProbeUnreachable: no connection to the database (refused, reset,
	// closed, PostgreSQL shutting down or starting: 08xxx, 57P01-57P03,
	// 53300 too_many_connections).
	ProbeUnreachable ProbeKind = "unreachable"
	// ProbeReadOnly: the database takes reads only (SQLITE_READONLY, a
	// read-only filesystem, PostgreSQL 25006: a standby or a read-only
	// default).
	ProbeReadOnly ProbeKind = "read-only"
	// ProbeTimeout: the write did not end within the probe's deadline (or
	// SQLite's busy timeout, or PostgreSQL's statement_timeout).
	ProbeTimeout ProbeKind = "timeout"
	// ProbeFailed: any other failure; its cause is in the log.
	ProbeFailed ProbeKind = "failed"
)

// ProbeError is a failed write probe: its kind, and the cause for the log.
type ProbeError struct {
	Kind ProbeKind
	Err  error
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("write probe: database %s: %v", e.Kind, e.Err)
}

func (e *ProbeError) Unwrap() error { return e.Err }

// KindOf is the kind of a probe's error: ProbeFailed for an error that is
// not a *ProbeError, "" for nil.
func KindOf(err error) ProbeKind {
	if err == nil {
		return ""
	}
	var pe *ProbeError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ProbeFailed
}

// Probe defaults.
const (
	// DefaultProbeFloor is the least free space SQLite's filesystem may
	// have: one WAL's worth, SQLite's automatic checkpoint of 1,000 pages
	// of 4 KiB (4,096,000 bytes), rounded up to 4 MiB. A WAL is reused
	// from its start after a checkpoint, so a small write can still
	// succeed on a full disk while the next burst of events finds no room:
	// below the floor the database counts as full whatever the write says.
	DefaultProbeFloor = 4 << 20
	// DefaultProbeTimeout bounds one probe (statfs and the write).
	DefaultProbeTimeout = 2 * time.Second
	// DefaultProbeEvery: a probe's result is shared for this long, so a
	// flood of unauthenticated /readyz requests is at most one write a
	// second.
	DefaultProbeEvery = time.Second
)

// probeTable is the probe's own table of one row, created on first use:
// not part of the ent schema (nothing reads it but the tests; a migration
// must not carry it), the same SQL on both engines. The row is updated in
// place, so the table never grows; writes counts the probes that wrote.
const (
	probeTable  = "wagraph_write_probe"
	probeCreate = "CREATE TABLE IF NOT EXISTS " + probeTable + " (id INTEGER PRIMARY KEY, at BIGINT NOT NULL, writes BIGINT NOT NULL)"
	probeUpsert = "INSERT INTO " + probeTable + " (id, at, writes) VALUES (1, %s, 1) " +
		"ON CONFLICT (id) DO UPDATE SET at = excluded.at, writes = " + probeTable + ".writes + 1"
)

// Probe checks that the database takes writes: a real write through the
// product's own pool (a one-row upsert: the write lock, the commit, the
// WAL on PostgreSQL), and on SQLite the free space of the filesystem
// holding the database. Check is safe for concurrent use: callers within
// Every of the last write's start share its result, and callers during a
// write wait for it rather than starting their own (single flight).
type Probe struct {
	sql     *sql.DB
	dialect string
	dir     string // SQLite: the directory of the database file

	// FreeSpace returns the bytes an unprivileged writer may still use on
	// the filesystem holding dir (statfs); tests fill the disk with it.
	FreeSpace func(dir string) (uint64, error)
	// Floor is the free space below which SQLite counts as full.
	Floor uint64
	// Timeout bounds one probe; Every is how long its result is shared.
	Timeout time.Duration
	Every   time.Duration
	// Now is the clock of Every.
	Now func() time.Time

	mu      sync.Mutex
	created bool // the probe's table exists
	last    time.Time
	lastErr error
	flight  chan struct{} // closed when the probe under way ends; nil when none
}

// NewProbe returns the write probe of d with the defaults.
func NewProbe(d *DB) *Probe {
	p := &Probe{
		sql: d.SQL, dialect: d.Dialect,
		FreeSpace: statfsFree, Floor: DefaultProbeFloor,
		Timeout: DefaultProbeTimeout, Every: DefaultProbeEvery, Now: time.Now,
	}
	if d.Dialect == dialect.SQLite {
		p.dir = filepath.Dir(d.Where)
	}
	return p
}

// Check returns nil when the database takes writes, else a *ProbeError
// naming the kind of failure and wrapping its cause. Every call pings the
// pool first (no write; what /readyz did before the probe), so a closed
// pool or a server gone shows at once, not a second late; the write's
// result is shared while younger than Every.
func (p *Probe) Check(ctx context.Context) error {
	if err := p.ping(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	for p.flight != nil {
		flight := p.flight
		p.mu.Unlock()
		select {
		case <-flight:
		case <-ctx.Done():
			return &ProbeError{Kind: ProbeTimeout, Err: fmt.Errorf("waiting for the write probe under way: %w", ctx.Err())}
		}
		p.mu.Lock()
	}
	if !p.last.IsZero() && p.Now().Sub(p.last) < p.Every {
		err := p.lastErr
		p.mu.Unlock()
		return err
	}
	flight := make(chan struct{})
	p.flight = flight
	p.last = p.Now()
	p.mu.Unlock()

	// The probe's deadline is its own: a caller that goes away does not
	// cut short the write the others wait for.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	err := p.probe(pctx)
	cancel()

	p.mu.Lock()
	p.lastErr = err
	p.flight = nil
	close(flight)
	p.mu.Unlock()
	return err
}

func (p *Probe) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	err := p.sql.PingContext(ctx)
	if err == nil {
		return nil
	}
	kind := classify(ctx, err)
	if kind == ProbeFailed { // a pool that cannot even hand out a connection
		kind = ProbeUnreachable
	}
	return &ProbeError{Kind: kind, Err: fmt.Errorf("ping: %w", err)}
}

// probe runs one check: the floor on SQLite, then the write.
func (p *Probe) probe(ctx context.Context) error {
	if p.dir != "" {
		free, err := p.FreeSpace(p.dir)
		if err != nil {
			return &ProbeError{Kind: ProbeFailed, Err: fmt.Errorf("free space of %s: %w", p.dir, err)}
		}
		if free < p.Floor {
			return &ProbeError{Kind: ProbeFull, Err: fmt.Errorf("%d bytes free on the filesystem of %s, below the floor of %d", free, p.dir, p.Floor)}
		}
	}
	if err := p.write(ctx); err != nil {
		return &ProbeError{Kind: classify(ctx, err), Err: err}
	}
	return nil
}

func (p *Probe) write(ctx context.Context) error {
	p.mu.Lock()
	created := p.created
	p.mu.Unlock()
	if !created {
		// Two processes of a cluster creating the table at once: one of
		// them is told it exists (42P07) or that its type does (23505,
		// 42710).
		var pe *pgconn.PgError
		if _, err := p.sql.ExecContext(ctx, probeCreate); err != nil && !(errors.As(err, &pe) && (pe.Code == "42P07" || pe.Code == "23505" || pe.Code == "42710")) {
			return fmt.Errorf("create %s: %w", probeTable, err)
		}
		p.mu.Lock()
		p.created = true
		p.mu.Unlock()
	}
	placeholder := "?"
	if p.dialect == dialect.Postgres {
		placeholder = "$1"
	}
	if _, err := p.sql.ExecContext(ctx, fmt.Sprintf(probeUpsert, placeholder), p.Now().UnixMilli()); err != nil {
		return fmt.Errorf("write %s: %w", probeTable, err)
	}
	return nil
}

// Writes is how many writes the probes of this database have made, by
// every process (0 before this probe's first): the tests count them.
func (p *Probe) Writes(ctx context.Context) (int64, error) {
	p.mu.Lock()
	created := p.created
	p.mu.Unlock()
	if !created {
		return 0, nil
	}
	var n int64
	err := p.sql.QueryRowContext(ctx, "SELECT writes FROM "+probeTable+" WHERE id = 1").Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// statfsFree is the space left to an unprivileged writer (blocks the root
// reserve holds back do not count) on the filesystem holding dir.
func statfsFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// classify names the kind of a failed write. The engine's own codes come
// first (a full disk is full whatever else went wrong), then the deadline,
// then the connection.
func classify(ctx context.Context, err error) ProbeKind {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrFull:
			return ProbeFull
		case sqlite3.ErrReadonly:
			return ProbeReadOnly
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return ProbeTimeout // the write lock did not come within the busy timeout
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if k, ok := postgresKind(pe.Code); ok {
			return k
		}
	}
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return ProbeFull
	case errors.Is(err, syscall.EROFS):
		return ProbeReadOnly
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) || ctx.Err() != nil:
		return ProbeTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ProbeTimeout
	}
	var ce *pgconn.ConnectError
	var oe *net.OpError
	switch {
	case errors.As(err, &ce), errors.As(err, &oe),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		// database/sql's error for a closed pool is not exported.
		strings.Contains(err.Error(), "sql: database is closed"):
		return ProbeUnreachable
	}
	return ProbeFailed
}

// postgresKind names the SQLSTATEs of a database that cannot take writes
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
func postgresKind(code string) (ProbeKind, bool) {
	switch {
	case code == "53100": // disk_full
		return ProbeFull, true
	case code == "25006": // read_only_sql_transaction: a standby, a read-only default
		return ProbeReadOnly, true
	case code == "57014": // query_canceled: statement_timeout
		return ProbeTimeout, true
	case strings.HasPrefix(code, "08"), // connection_exception
		code == "57P01", // admin_shutdown
		code == "57P02", // crash_shutdown
		code == "57P03", // cannot_connect_now: starting up, shutting down, recovering
		code == "53300": // too_many_connections
		return ProbeUnreachable, true
	}
	return "", false
}
