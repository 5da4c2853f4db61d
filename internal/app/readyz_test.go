package app

// An internal test: it reaches the server's write probe (a.probe) to fill
// the disk under it and to count its writes, which no client can. What
// /readyz answers for each state of the database is internal/health's test.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// newReadyzApp builds a server on the run's backend (as apptest.Start does:
// apptest imports this package) and waits for its sessions to be started.
func newReadyzApp(t *testing.T) *App {
	t.Helper()
	var id [6]byte
	_, _ = rand.Read(id[:])
	cfg, err := config.Load([]string{"--data-dir", t.TempDir(), "--admin-token", "wgu_readyzAdminToken0123456789abcdefghijklm",
		"--node-id", "readyz-" + hex.EncodeToString(id[:])}, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = dbtest.DatabaseURL(t)
	a, err := New(context.Background(), cfg, Options{Announce: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	select {
	case <-a.Ready():
	case <-time.After(time.Minute):
		t.Fatal("the sessions were not started within a minute")
	}
	return a
}

func getReadyz(a *App) (int, string) {
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

// TestReadyzFull: a database that takes no writes is 503 naming why: a
// full filesystem under SQLite (the write would still have succeeded:
// SQLite reuses its WAL); each kind the probe reports is
// internal/health's TestReadiness. Before, /readyz only pinged the
// database and answered 200 on a full disk.
func TestReadyzFull(t *testing.T) {
	a := newReadyzApp(t)
	if code, body := getReadyz(a); code != http.StatusOK || body != `{"status":"ready"}`+"\n" {
		t.Fatalf("/readyz of a healthy server: %d %s", code, body)
	}
	if !dbtest.Postgres(t) {
		// The filesystem of the SQLite database filled up, the probe's
		// shared result expired.
		p := a.probe
		p.FreeSpace = func(string) (uint64, error) { return 64 << 10, nil }
		p.Every = 0
		if code, body := getReadyz(a); code != http.StatusServiceUnavailable || body != `{"status":"unavailable","database":"full"}`+"\n" {
			t.Errorf("/readyz with 64 KiB free under SQLite: %d %s; want 503 naming full", code, body)
		}
	}
}

// TestReadyzFlood: /readyz is unauthenticated; a flood of it is at most
// one write a second: 100 requests within a second, ten at once every
// 90 ms, make one write or two.
func TestReadyzFlood(t *testing.T) {
	a := newReadyzApp(t)
	p := a.probe
	ctx := context.Background()
	before, err := p.Writes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const requests = 100
	var wg sync.WaitGroup
	codes := make(chan int, requests)
	start := time.Now()
	for i := range requests {
		if i > 0 && i%10 == 0 {
			time.Sleep(90 * time.Millisecond)
		}
		wg.Go(func() {
			code, _ := getReadyz(a)
			codes <- code
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("/readyz answered %d in the flood, want 200", code)
		}
	}
	after, err := p.Writes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Writes start at least a second apart within the flood's time.
	allowed := 1 + int64(elapsed/time.Second)
	t.Logf("%d requests in %s: %d writes", requests, elapsed.Round(time.Millisecond), after-before)
	if after-before < 1 || after-before > allowed {
		t.Errorf("%d /readyz requests in %s made %d writes, want 1 to %d", requests, elapsed, after-before, allowed)
	}
}
