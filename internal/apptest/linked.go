package apptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// LinkedPhone is the phone number of the session StartLinked gives.
const LinkedPhone = "4915559990001"

// linked is the data directory (and, on PostgreSQL, the database) where a
// sandbox server linked a session to LinkedPhone and then stopped: made by
// the first StartLinked of a test binary, copied by each after. Linking
// (a QR code, the pairing, the first key upload) is a good part of an
// end-to-end test's cost and what most of them do not test. It is the one
// value the tests of a binary share, only read once made; Main removes it.
var linked linkedFixture

type linkedFixture struct {
	once sync.Once
	dir  string // the data directory
	db   string // the PostgreSQL database ("" on SQLite)
	drop func() error
	sess Session
	err  error
}

// StartLinked runs a sandbox server (as StartSandbox) whose one session is
// already linked to LinkedPhone and CONNECTED: its data directory and
// database are a copy of the binary's linked fixture, restored at start as
// any linked session is. A test whose subject is linking links itself
// (LinkSession).
func StartLinked(t testing.TB) (*Server, Session) {
	t.Helper()
	return StartLinkedWith(t, nil)
}

// StartLinkedWith is StartLinked with the server's settings and options
// changed by adjust first (nil: none): a test of a setting starts from the
// same linked session as the others.
func StartLinkedWith(t testing.TB, adjust func(*config.Config, *app.Options)) (*Server, Session) {
	t.Helper()
	postgres := dbtest.Postgres(t)
	linked.once.Do(func() { linked.err = linked.make(postgres) })
	if linked.err != nil {
		t.Fatalf("the linked fixture: %v", linked.err)
	}
	dir := t.TempDir()
	if err := copyTree(linked.dir, dir); err != nil {
		t.Fatalf("copy the linked fixture: %v", err)
	}
	cfg, err := configIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if linked.db != "" {
		cfg.DatabaseURL = dbtest.CopyDatabase(t, linked.db)
	}
	cfg.Sandbox, cfg.AllowPrivateURLs = true, true
	// A random source of its own: the fixture's took the first values of
	// Start's, and a session created now must not get the linked one's id.
	opts := app.Options{Now: steppingClock(), Rand: rand.NewChaCha8([32]byte{'l', 'i', 'n', 'k', 'e', 'd'})}
	if adjust != nil {
		adjust(&cfg, &opts)
	}
	s := start(t, cfg, opts)
	s.WaitStatus(t, linked.sess.ID, "CONNECTED", nil)
	return s, s.Track(linked.sess)
}

// Main runs a package's tests (from its TestMain) and then removes the
// linked fixture, if a test made one.
func Main(m *testing.M) int {
	code := m.Run()
	if linked.dir != "" {
		os.RemoveAll(linked.dir)
	}
	if linked.drop != nil {
		if err := linked.drop(); err != nil {
			fmt.Fprintln(os.Stderr, "apptest:", err)
		}
	}
	return code
}

// make links a session on a server of its own and stops it, settled.
func (f *linkedFixture) make(postgres bool) error {
	dir, err := os.MkdirTemp("", "wagraph-linked-")
	if err != nil {
		return err
	}
	f.dir = filepath.Join(dir, "data")
	if err := os.Mkdir(f.dir, 0o700); err != nil {
		return err
	}
	cfg, err := configIn(f.dir)
	if err != nil {
		return err
	}
	if postgres {
		tmpl, err := dbtest.PostgresTemplate()
		if err != nil {
			return err
		}
		if cfg.DatabaseURL, f.drop, err = dbtest.NewDatabase(tmpl); err != nil {
			return err
		}
		f.db = dbtest.DatabaseName(cfg.DatabaseURL)
	} else if err := dbtest.SeedSQLite(f.dir); err != nil {
		return err
	}
	cfg.Sandbox, cfg.AllowPrivateURLs = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, err := app.New(ctx, cfg, app.Options{Now: steppingClock(), Rand: rand.NewChaCha8([32]byte{'w', 'a', 'g', 'r', 'a', 'p', 'h'}), Announce: io.Discard})
	if err != nil {
		return fmt.Errorf("start the server: %w", err)
	}
	srv := httptest.NewServer(a.Handler())
	<-a.Ready()
	f.sess, err = link(ctx, srv.Client(), srv.URL, AdminToken, LinkedPhone)
	if err == nil {
		err = settle(a.Sandbox().Network(), f.sess)
	}
	srv.Close()
	return errors.Join(err, a.Close())
}

// copyTree copies the files under src into dst (an existing directory),
// but the data directory's lock.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o700)
		case d.Name() == "wagraph.lock":
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
}
