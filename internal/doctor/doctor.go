// Package doctor checks what `wagraph serve` needs, with the settings serve
// would run with, and says for each thing whether it is fine and, if not,
// what to do: the data directory (writable, held by a running wagraph?),
// the database, ffmpeg, the WhatsApp Web version lookup, the listen
// address, the NATS broker of the event stream and the media store. It
// changes nothing: a file it creates to test a directory (or a bucket) is
// removed, and a database is opened read-only.
package doctor

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver
	_ "github.com/mattn/go-sqlite3"    // the SQLite driver

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/natsstream"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// Status is a check's verdict.
type Status string

// A check is OK, a warning (serve runs, something works less well), or a
// failure (serve would not start, or not work).
const (
	OK   Status = "OK"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Result is one check: what was checked, its verdict, and what was found
// and what to do, in one line.
type Result struct {
	Check   string
	Status  Status
	Message string
}

// DefaultTimeout bounds each check that waits on something else: the
// database connection, ffmpeg, the version lookup.
const DefaultTimeout = 5 * time.Second

// Options tune Run.
type Options struct {
	// Timeout bounds each check that waits; 0 is DefaultTimeout.
	Timeout time.Duration
	// VersionClient reads WhatsApp Web's page; nil is a client through
	// netguard, as serve's.
	VersionClient *http.Client
}

// Run runs every check on cfg, in order.
func Run(ctx context.Context, cfg config.Config, opts Options) []Result {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	dir, lock := checkDataDir(cfg)
	return []Result{
		dir,
		lock,
		checkPrivate(cfg),
		checkDatabase(ctx, cfg, opts.Timeout, dir.Status == Fail),
		checkFFmpeg(ctx, cfg, opts.Timeout),
		checkVersion(ctx, cfg, opts),
		checkListen(cfg, lock.Status != OK),
		checkNATS(ctx, cfg, opts.Timeout),
		checkMedia(ctx, cfg, opts.Timeout, dir.Status == Fail),
	}
}

// Write prints one line per result and reports whether any failed.
func Write(w io.Writer, results []Result) (failed bool) {
	for _, r := range results {
		fmt.Fprintf(w, "%-4s  %-20s %s\n", r.Status, r.Check, r.Message)
		failed = failed || r.Status == Fail
	}
	return failed
}

const (
	checkDir     = "data directory"
	checkLock    = "data directory lock"
	checkFiles   = "private files"
	checkDB      = "database"
	checkFF      = "ffmpeg"
	checkWA      = "WhatsApp Web version"
	checkAddress = "listen address"
	checkStream  = "NATS stream"
	checkKept    = "media store"
)

func checkDataDir(cfg config.Config) (dir, lock Result) {
	if !cfg.UsesDataDir() {
		msg := "not used: storage is on PostgreSQL (--database-url) and no in-process sandbox keeps state there"
		return Result{checkDir, OK, cfg.DataDir + " " + msg}, Result{checkLock, OK, "not taken: " + msg}
	}
	switch exists, err := datadir.Check(cfg.DataDir); {
	case err != nil:
		dir = Result{checkDir, Fail, strings.TrimPrefix(err.Error(), "data directory ")}
	case exists:
		dir = Result{checkDir, OK, fmt.Sprintf("%s exists and uid %d can write in it", cfg.DataDir, os.Geteuid())}
	default:
		dir = Result{checkDir, OK, fmt.Sprintf("%s does not exist yet: serve creates it (its parent is writable)", cfg.DataDir)}
	}
	switch pid, held, err := datadir.Holder(cfg.DataDir, datadir.ServerLock); {
	case err != nil:
		lock = Result{checkLock, Warn, fmt.Sprintf("cannot tell whether a wagraph runs on %s: %v", cfg.DataDir, err)}
	case held && pid > 0:
		lock = Result{checkLock, Warn, fmt.Sprintf("%s is in use by a running wagraph (pid %d): a second serve on it would exit; stop that one or choose another --data-dir", cfg.DataDir, pid)}
	case held:
		lock = Result{checkLock, Warn, fmt.Sprintf("%s is in use by a running wagraph: a second serve on it would exit; stop that one or choose another --data-dir", cfg.DataDir)}
	default:
		lock = Result{checkLock, OK, "free: no wagraph is running on " + cfg.DataDir}
	}
	return dir, lock
}

// secretFiles are the databases of a data directory, named with what
// they hold when doctor finds them open to others, the key store first.
var secretFiles = []struct{ name, holds string }{
	{datadir.DeviceStore, "the WhatsApp device store: each linked device's keys"},
	{datadir.ProductDB, "the tokens' hashes and the webhooks' secrets"},
}

// secretFile is the index in secretFiles of the database whose file (or
// -wal, -shm, -journal) path is, len(secretFiles) for any other file.
func secretFile(path string) int {
	base := filepath.Base(path)
	for i, f := range secretFiles {
		if base == f.name || strings.HasPrefix(base, f.name+"-") {
			return i
		}
	}
	return len(secretFiles)
}

// checkPrivate fails when a file of the data directory is open to users
// other than its owner: the device store holds each linked device's keys,
// whoever reads them is that device. serve restricts them at start
// (datadir.Restrict), but what was readable may have been read.
func checkPrivate(cfg config.Config) Result {
	if !cfg.UsesDataDir() {
		return Result{checkFiles, OK, "not looked at: the data directory holds no database (storage is on PostgreSQL)"}
	}
	exposed, err := datadir.FindExposed(cfg.DataDir)
	if err != nil && len(exposed) == 0 {
		return Result{checkFiles, Warn, fmt.Sprintf("cannot look at the modes of the files of %s: %v", cfg.DataDir, err)}
	}
	if len(exposed) == 0 {
		return Result{checkFiles, OK, fmt.Sprintf("no file of %s is open to users other than its owner", cfg.DataDir)}
	}
	// The key store first: it is the one whose copy is a linked device.
	slices.SortStableFunc(exposed, func(a, b datadir.Exposed) int {
		return cmp.Compare(secretFile(a.Path), secretFile(b.Path))
	})
	var parts, paths []string
	for _, e := range exposed {
		what := e.Path
		if i := secretFile(e.Path); i < len(secretFiles) {
			what += " (" + secretFiles[i].holds + ")"
		}
		parts = append(parts, fmt.Sprintf("%s has mode %04o", what, e.Mode))
		paths = append(paths, e.Path)
	}
	return Result{checkFiles, Fail, fmt.Sprintf("%s: users other than its owner may read it; "+
		"chmod go-rwx %s (serve also does at start); a user who read the device store could act as its linked devices: "+
		"if one may have, log the sessions out and link them again", strings.Join(parts, ", "), strings.Join(paths, " "))}
}

// The tables whose presence says the schema is there.
const schemaTables = "'users','sessions'"

// checkDatabase connects to the database; dirFailed says the data
// directory cannot be used, where SQLite could not create its file.
func checkDatabase(ctx context.Context, cfg config.Config, timeout time.Duration, dirFailed bool) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		db         *sql.DB
		where      string
		tablesStmt string
		err        error
	)
	if cfg.DatabaseURL != "" {
		where = storage.PostgresWhere(cfg.DatabaseURL)
		db, err = sql.Open(storage.PostgresDriver, cfg.DatabaseURL)
		tablesStmt = "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN (" + schemaTables + ")"
	} else {
		path := filepath.Join(cfg.DataDir, datadir.ProductDB)
		where = "SQLite " + path
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if dirFailed {
				return Result{checkDB, Fail, where + " cannot be created: the data directory cannot be used (above)"}
			}
			return Result{checkDB, OK, where + " does not exist yet: serve creates it"}
		}
		// Read-only: a check must not create or migrate anything.
		db, err = sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=2000")
		tablesStmt = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (" + schemaTables + ")"
	}
	if err != nil {
		return Result{checkDB, Fail, fmt.Sprintf("%s: %v", where, err)}
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return Result{checkDB, Fail, fmt.Sprintf("%s: cannot connect: %v; %s", where, err, dbAdvice(cfg))}
	}
	var tables int
	if err := db.QueryRowContext(ctx, tablesStmt).Scan(&tables); err != nil {
		return Result{checkDB, Fail, fmt.Sprintf("%s: cannot read it: %v; %s", where, err, dbAdvice(cfg))}
	}
	if tables < 2 {
		return Result{checkDB, OK, where + ": reachable, no wagraph schema yet: serve creates it"}
	}
	var users, sessions int
	if err := db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM sessions)").Scan(&users, &sessions); err != nil {
		return Result{checkDB, Fail, fmt.Sprintf("%s: cannot read the schema: %v; %s", where, err, dbAdvice(cfg))}
	}
	return Result{checkDB, OK, fmt.Sprintf("%s: schema reachable (%d users, %d sessions)", where, users, sessions)}
}

func dbAdvice(cfg config.Config) string {
	if cfg.DatabaseURL != "" {
		return "check --database-url (host, port, database, user, password, sslmode) and that the server accepts this machine"
	}
	return "check the file's owner and permissions, or restore it from a backup"
}

func checkFFmpeg(ctx context.Context, cfg config.Config, timeout time.Duration) Result {
	if cfg.FFmpeg == "" {
		return Result{checkFF, Warn, "no converter (ffmpeg is not on PATH, or --ffmpeg none): voice notes other than OGG/Opus are refused; install ffmpeg (apt-get install ffmpeg) or point --ffmpeg at one"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, cfg.FFmpeg, "-hide_banner", "-version").Output()
	if err != nil {
		return Result{checkFF, Fail, fmt.Sprintf("%s does not run (%s -version: %v): reinstall ffmpeg, point --ffmpeg at a working one, or say --ffmpeg none", cfg.FFmpeg, cfg.FFmpeg, err)}
	}
	first, _, _ := strings.Cut(string(out), "\n")
	first, _, _ = strings.Cut(first, " Copyright")
	return Result{checkFF, OK, fmt.Sprintf("%s runs: %s", cfg.FFmpeg, strings.TrimSpace(first))}
}

func checkVersion(ctx context.Context, cfg config.Config, opts Options) Result {
	switch {
	case cfg.Sandbox:
		return Result{checkWA, OK, "not looked up: in sandbox mode the sessions read the simulated network's page"}
	case cfg.WAVersion.Mode == whatsapp.VersionBuiltin:
		return Result{checkWA, OK, "not looked up: --wa-version builtin announces " + whatsapp.BuiltinVersion()}
	case cfg.WAVersion.Mode == whatsapp.VersionPinned:
		return Result{checkWA, OK, "not looked up: --wa-version pins " + cfg.WAVersion.String()}
	}
	client := opts.VersionClient
	if client == nil {
		client = &http.Client{Transport: netguard.New(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs}).Transport()}
	}
	v, err := whatsapp.NewVersions(whatsapp.VersionOptions{Setting: whatsapp.VersionSetting{Mode: whatsapp.VersionAuto}, HTTPClient: client, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Result{checkWA, Fail, err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if _, err := v.Refresh(ctx); err != nil {
		return Result{checkWA, Warn, fmt.Sprintf("the lookup failed (%v): offline, or https://web.whatsapp.com is blocked. Sessions still connect, announcing the built-in %s "+
			"until a lookup succeeds (at start, daily, after a refusal); if WhatsApp refuses it as outdated, let wagraph reach https://web.whatsapp.com or pin --wa-version", err, v.String())}
	}
	return Result{checkWA, OK, "read from WhatsApp Web: the sessions announce " + v.String()}
}

func checkListen(cfg config.Config, dirHeld bool) Result {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err == nil {
		ln.Close()
		return Result{checkAddress, OK, cfg.Addr + " is free"}
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE) && dirHeld:
		return Result{checkAddress, Warn, cfg.Addr + " is in use, likely by the wagraph running on " + cfg.DataDir + "; a second one needs another --addr (and --data-dir)"}
	case errors.Is(err, syscall.EADDRINUSE):
		return Result{checkAddress, Fail, cfg.Addr + " is in use by another process: stop it or choose another --addr"}
	case errors.Is(err, syscall.EACCES):
		return Result{checkAddress, Fail, fmt.Sprintf("%s: permission denied (%v): ports below 1024 need root or CAP_NET_BIND_SERVICE; choose a port from 1024, such as 8080", cfg.Addr, err)}
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return Result{checkAddress, Fail, fmt.Sprintf("%s: %v: the host is not an address of this machine; use one of its addresses, 127.0.0.1 or 0.0.0.0", cfg.Addr, err)}
	}
	return Result{checkAddress, Fail, fmt.Sprintf("%s cannot be listened on: %v; choose another --addr", cfg.Addr, err)}
}

// checkNATS reaches the broker of --nats-url and looks at the stream,
// changing nothing (serve creates a missing one). A failure names what
// fails; serve would still start and keep the events in the log until the
// broker answers, unless the stream is one that does not take them.
func checkNATS(ctx context.Context, cfg config.Config, timeout time.Duration) Result {
	if cfg.NATS.URL == "" {
		return Result{checkStream, OK, "off: no --nats-url"}
	}
	msg, err := natsstream.Check(ctx, cfg.NATS.URL, cfg.NATS.Creds, cfg.NATS.Stream, timeout)
	if err != nil {
		return Result{checkStream, Fail, err.Error() + "; the events wait in the log until the stream takes them"}
	}
	return Result{checkStream, OK, msg}
}

// checkMedia writes a probe to the store of --media-store, reads it back
// and deletes it; dirFailed says the data directory cannot be used, where
// the local store lives. A local store not made yet is not made here.
func checkMedia(ctx context.Context, cfg config.Config, timeout time.Duration, dirFailed bool) Result {
	choice := cfg.Media.Choice(cfg.DataDir)
	switch choice.Kind {
	case mediastore.KindNone:
		return Result{checkKept, OK, "skipped: --media-store none: media is downloaded on demand while WhatsApp keeps it"}
	case mediastore.KindLocal:
		if _, err := os.Stat(choice.Dir); errors.Is(err, os.ErrNotExist) {
			if dirFailed {
				return Result{checkKept, Fail, "local " + choice.Dir + " cannot be created: the data directory cannot be used (above)"}
			}
			return Result{checkKept, OK, "local " + choice.Dir + " does not exist yet: serve creates it"}
		}
	}
	const unkept = "; until it is fixed received media is not kept (the media route downloads it on demand while WhatsApp keeps it)"
	st, err := mediastore.New(choice)
	if err != nil {
		return Result{checkKept, Fail, err.Error() + "; serve would not start"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := st.Check(ctx); err != nil {
		return Result{checkKept, Fail, err.Error() + unkept}
	}
	return Result{checkKept, OK, st.String() + ": writable (a probe written, read back and deleted)"}
}
