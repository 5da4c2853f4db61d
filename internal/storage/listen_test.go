package storage_test

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// listening is a Listener under test: what it delivered, and a signal each
// time it listens.
type listening struct {
	l         *storage.Listener
	payloads  chan string
	connected chan struct{}
}

func listen(t *testing.T, url string, opts storage.ListenerOptions) *listening {
	t.Helper()
	r := &listening{payloads: make(chan string, 100), connected: make(chan struct{}, 10)}
	opts.URL, opts.Channel = url, "test_channel"
	opts.Notify = func(p string) { r.payloads <- p }
	opts.Connected = func() { r.connected <- struct{}{} }
	l, err := storage.Listen(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	r.l = l
	return r
}

func wait[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// postgres opens a fresh PostgreSQL database (skipping on SQLite) and
// returns its URL and a pool to notify through.
func postgres(t *testing.T) (string, *sql.DB) {
	t.Helper()
	if !dbtest.Postgres(t) {
		t.Skip("LISTEN is PostgreSQL's; the PostgreSQL pass runs this")
	}
	loc := dbtest.NewLocation(t)
	return loc.URL, loc.Open(t).SQL
}

func notify(t *testing.T, db *sql.DB, channel, payload string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), "SELECT pg_notify($1, $2)", channel, payload); err != nil {
		t.Fatal(err)
	}
}

// TestListenerDelivers: the payloads of the channel's notifications reach
// Notify in the order they were sent; another channel's do not.
func TestListenerDelivers(t *testing.T) {
	url, db := postgres(t)
	r := listen(t, url, storage.ListenerOptions{})
	wait(t, r.connected, "the listener to listen")
	notify(t, db, "other_channel", "not for us")
	for _, p := range []string{"one", "two", "three"} {
		notify(t, db, "test_channel", p)
	}
	for _, want := range []string{"one", "two", "three"} {
		if got := wait(t, r.payloads, "a notification"); got != want {
			t.Fatalf("payload %q, want %q", got, want)
		}
	}
	r.l.Close()
	select {
	case p := <-r.payloads:
		t.Fatalf("payload %q delivered besides", p)
	default:
	}
}

// TestListenerReconnects: a listener whose backend is terminated connects
// again (after its backoff, told of the failure), says so (Connected), and
// delivers what is notified after.
func TestListenerReconnects(t *testing.T) {
	url, db := postgres(t)
	failed := make(chan int, 10)
	r := listen(t, url, storage.ListenerOptions{Backoff: func(n int) time.Duration {
		failed <- n
		return time.Millisecond
	}})
	wait(t, r.connected, "the listener to listen")
	res, err := db.ExecContext(context.Background(),
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
		storage.ListenerName)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d listener backends terminated, want 1", n)
	}
	if n := wait(t, failed, "the listener to fail"); n != 1 {
		t.Fatalf("backoff after failure %d, want 1", n)
	}
	wait(t, r.connected, "the listener to listen again")
	notify(t, db, "test_channel", "after")
	if got := wait(t, r.payloads, "a notification"); got != "after" {
		t.Fatalf("payload %q, want after", got)
	}
}

// TestListenerNeverLogsTheURL: a listener that cannot connect retries and
// logs each failure naming the database by host and name, never with the
// URL's password; an unreadable URL is refused, its password unsaid too.
func TestListenerNeverLogsTheURL(t *testing.T) {
	var logs logtest.Buffer
	failed := make(chan int, 10)
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: "postgres://wagraph:s3cret-pw@127.0.0.1:1/wagraphdb?connect_timeout=5", Channel: "c",
		Notify: func(string) {}, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Backoff: func(n int) time.Duration { failed <- n; return time.Millisecond },
	})
	if err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 2; want++ {
		if n := wait(t, failed, "a failure to connect"); n != want {
			t.Fatalf("failure %d, want %d", n, want)
		}
	}
	l.Close()
	out := logs.String()
	if strings.Contains(out, "s3cret-pw") {
		t.Errorf("the log shows the password:\n%s", out)
	}
	if !strings.Contains(out, "127.0.0.1:1/wagraphdb") || !strings.Contains(out, "reconnecting") {
		t.Errorf("the log does not name the database and the retry:\n%s", out)
	}

	_, err = storage.Listen(context.Background(), storage.ListenerOptions{URL: "postgres://wagraph:s3cret-pw@h/%zz", Channel: "c", Notify: func(string) {}})
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("Listen at an unreadable URL: %v; want an error without the password", err)
	}
}

// TestListenerStopsWithItsContext: a listener ends when its creator's
// context does (Close then returns at once).
func TestListenerStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	failed := make(chan int, 10)
	l, err := storage.Listen(ctx, storage.ListenerOptions{
		URL: "postgres://wagraph@127.0.0.1:1/x", Channel: "c", Notify: func(string) {},
		Backoff: func(n int) time.Duration { failed <- n; return time.Hour },
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, failed, "a failure to connect")
	cancel()
	done := make(chan struct{})
	go func() { l.Close(); close(done) }()
	wait(t, done, "the listener to stop")
}

// TestListenerKeepalive: a silent connection is pinged after Keepalive
// (pg_stat_activity shows the ping as its last statement) and kept: no
// failure, no second Connected, and notifications still arrive.
func TestListenerKeepalive(t *testing.T) {
	url, db := postgres(t)
	failed := make(chan int, 10)
	r := listen(t, url, storage.ListenerOptions{Keepalive: 20 * time.Millisecond, Backoff: func(n int) time.Duration {
		failed <- n
		return time.Millisecond
	}})
	wait(t, r.connected, "the listener to listen")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var query string
		err := db.QueryRowContext(context.Background(),
			`SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
			storage.ListenerName).Scan(&query)
		if err != nil {
			t.Fatal(err)
		}
		if query == "-- ping" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener's last statement is %q: never pinged", query)
		}
		time.Sleep(10 * time.Millisecond) // polling the server's view: no signal to wait on
	}
	notify(t, db, "test_channel", "still here")
	if got := wait(t, r.payloads, "a notification"); got != "still here" {
		t.Fatalf("payload %q, want still here", got)
	}
	select {
	case n := <-failed:
		t.Fatalf("the connection failed (%d) on a keepalive", n)
	case <-r.connected:
		t.Fatal("the listener connected again on a keepalive")
	default:
	}
}
