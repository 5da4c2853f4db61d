// Package apptest starts a whole wagraph server in-process for tests: a real
// SQLite database in a temporary directory, the real HTTP handler behind
// httptest, a pinned clock and random source so every response is byte-for-
// byte repeatable, and helpers to call REST and GraphQL as a client would.
package apptest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp"
)

// AdminToken is the bootstrap admin token of every test server.
const AdminToken = "wgu_testAdminToken0123456789abcdefghijklmnop"

// Epoch is the pinned clock's first reading.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Server is a running test server.
type Server struct {
	*httptest.Server
	App     *app.App
	Config  config.Config
	Stderr  *bytes.Buffer
	DataDir string

	mu       sync.Mutex
	linked   []Session // settled before the server stops
	stopOnce sync.Once
}

// Config returns the settings of a test server: defaults, a temporary data
// directory, a fresh database of the run's backend (internal/dbtest: its
// schema already migrated), the admin token, and a rate limit high enough
// to stay out of the way.
func Config(t testing.TB) config.Config {
	t.Helper()
	cfg, err := configIn(dbtest.DataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = dbtest.DatabaseURLWith(t, StoreExtension()) // "" on SQLite: the data directory holds it
	if cfg.DatabaseURL != "" {
		cfg.Media.Kind = config.MediaNone // --media-store's default with --database-url, which was "" when cfg was read
	}
	return cfg
}

// StoreExtension has a test's PostgreSQL database made with whatsmeow's
// device store in it, as the server makes it at its start (its upgrade
// took half a second a test otherwise): for the tests that give a server
// a database of their own (dbtest.DatabaseURLWith).
func StoreExtension() dbtest.Extension {
	return dbtest.Extension{Name: "whatsmeow_" + strconv.Itoa(whatsapp.StoreSchemaVersion()), Build: func(ctx context.Context, url string) error {
		st, err := whatsapp.OpenPostgresStore(ctx, storage.PostgresDriver, url, storage.PostgresWhere(url), nil)
		if err == nil {
			err = st.Close()
		}
		return err
	}}
}

// configIn is a test server's settings on the data directory dir, its
// database not yet chosen.
func configIn(dir string) (config.Config, error) {
	cfg, err := config.Load([]string{"--data-dir", dir, "--admin-token", AdminToken, "--rate", "10000/s,10000", "--node-id", nodeID(dir)},
		func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		return cfg, fmt.Errorf("test config: %w", err)
	}
	return cfg, nil
}

// LogEnv, when set, makes the servers the tests start write their log to
// stderr at debug level: to see what a failing test's server did.
const LogEnv = "WAGRAPH_TEST_LOG"

// nodeID names a test server after its data directory (the test's
// temporary directory and the call's number in it): servers of one test
// process sharing a database (the PostgreSQL pass) must have ids of their
// own, as processes do (--node-id's default holds the pid).
func nodeID(dataDir string) string {
	id := filepath.Base(filepath.Dir(dataDir)) + "-" + filepath.Base(dataDir)
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, id)
	return id[max(0, len(id)-config.MaxNodeIDLen):]
}

// Start runs a server with cfg (Config(t) when nil is given through the
// zero value) until the test ends.
func Start(t testing.TB, cfg config.Config) *Server {
	t.Helper()
	return StartWith(t, cfg, nil)
}

// StartWith is Start with the server's options changed by adjust first
// (nil: none).
func StartWith(t testing.TB, cfg config.Config, adjust func(*app.Options)) *Server {
	t.Helper()
	opts := app.Options{
		Now:  steppingClock(),
		Rand: rand.NewChaCha8([32]byte{'w', 'a', 'g', 'r', 'a', 'p', 'h'}),
	}
	if adjust != nil {
		adjust(&opts)
	}
	return start(t, cfg, opts)
}

// StartLive is Start with the wall clock and crypto randomness: for tests
// where time must pass as it does (scheduled sends across a restart).
func StartLive(t testing.TB, cfg config.Config) *Server {
	t.Helper()
	return start(t, cfg, app.Options{})
}

func start(t testing.TB, cfg config.Config, opts app.Options) *Server {
	t.Helper()
	if cfg.DataDir == "" {
		cfg = Config(t)
	}
	stderr := &bytes.Buffer{}
	opts.Announce = stderr
	if opts.Logger == nil && os.Getenv(LogEnv) != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := app.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	s := &Server{Server: httptest.NewServer(a.Handler()), App: a, Config: cfg, Stderr: stderr, DataDir: cfg.DataDir}
	t.Cleanup(func() { s.Stop(t) })
	s.WaitReady(t)
	return s
}

// WaitReady waits until the server has started its linked sessions (the
// app restores them in the background; /readyz is 503 until then), so a
// test starts from a known state; it fails the test after a minute. Start
// calls it.
func (s *Server) WaitReady(t testing.TB) {
	t.Helper()
	select {
	case <-s.App.Ready():
	case <-time.After(time.Minute):
		t.Fatal("the server did not start its linked sessions within a minute")
	}
}

// Stop settles the linked sessions of a sandbox server and stops it, as a
// shutdown would; the test's end calls it too (it runs once).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stopOnce.Do(func() {
		if l := s.App.Sandbox(); l != nil {
			s.mu.Lock()
			linked := append([]Session(nil), s.linked...)
			s.mu.Unlock()
			for _, sess := range linked {
				Settle(t, l.Network(), sess)
			}
		}
		s.Server.Close()
		if err := s.App.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
}

// steppingClock returns a clock that starts at Epoch and moves one second
// forward at every reading: deterministic, and strictly increasing.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	t := Epoch
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := t
		t = t.Add(time.Second)
		return now
	}
}

// Response is a REST answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("response is not JSON (%v): %s", err, r.Body)
	}
}

// Message returns the message of a failure envelope.
func (r Response) Message(t testing.TB) string {
	t.Helper()
	var env struct{ Status, Message string }
	r.JSON(t, &env)
	return env.Message
}

// REST sends one request to /api/v1+path with token (none when empty) and a
// JSON body (none when empty).
func (s *Server) REST(t testing.TB, method, path, token, body string) Response {
	t.Helper()
	return s.Do(t, method, "/api/v1"+path, token, body, map[string]string{"Content-Type": "application/json"})
}

// Do sends one request with the given headers.
func (s *Server) Do(t testing.TB, method, path, token, body string, headers map[string]string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatalf("build request: %v", err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// GQLError is one GraphQL error as a client sees it.
type GQLError = testclient.Error

// GQLResponse is a GraphQL answer.
type GQLResponse = testclient.Answer

// GraphQL runs one operation over HTTP with token (none when empty): the
// answer, whatever errors it holds (testclient.Post).
func (s *Server) GraphQL(t testing.TB, token, query string, vars map[string]any) GQLResponse {
	t.Helper()
	ans, err := testclient.Post(context.Background(), s.Client(), s.URL, token, query, vars)
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

// MustGraphQL runs an operation that must succeed and decodes its data into v.
func (s *Server) MustGraphQL(t testing.TB, token, query string, vars map[string]any, v any) {
	t.Helper()
	res := s.GraphQL(t, token, query, vars)
	if len(res.Errors) > 0 {
		t.Fatalf("graphql %q: %+v", query, res.Errors)
	}
	if v != nil {
		if err := json.Unmarshal(res.Data, v); err != nil {
			t.Fatalf("graphql data: %v: %s", err, res.Data)
		}
	}
}

// CreateSession creates a session named name as the admin and returns its
// id.
func (s *Server) CreateSession(t testing.TB, name string) string {
	t.Helper()
	var r struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.MustGraphQL(t, AdminToken, `mutation($n: String) { createSession(name: $n) { session { id } } }`, map[string]any{"n": name}, &r)
	return r.CreateSession.Session.ID
}

// RawDB opens, beside the server, the database of one of its stores:
// "wagraph.db" (the product's tables) or "whatsmeow.db" (whatsmeow's
// device store), SQLite files in the data directory, or on PostgreSQL the
// server's one database holding both. Postgres says which: the SQL of a
// test that reaches under the server differs.
func (s *Server) RawDB(t testing.TB, file string) (db *sql.DB, postgres bool) {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+filepath.Join(s.DataDir, file)+"?_busy_timeout=10000"
	if s.Config.DatabaseURL != "" {
		driver, dsn = storage.PostgresDriver, s.Config.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, s.Config.DatabaseURL != ""
}
