package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestListensBeforeSessionsAreStarted (issue 9): with 200 linked sessions
// in the data directory, `wagraph serve` answers /healthz within a second
// of its start, /readyz is 503 {"status":"starting",…} while the sessions
// are being started and 200 once every one has been (each is then
// CONNECTING or CONNECTED), and all of them end up CONNECTED. The network
// runs apart, as `wagraph sandbox-network`, so the devices linked by the
// first server are still linked when the second one starts.
func TestListensBeforeSessionsAreStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test (200 linked sessions): make test runs it, make test-short skips it")
	}
	const sessions = 200
	network, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control

	first := apptest.StartLive(t, cfg)
	began := time.Now()
	linked := linkMany(t, first, sessions, "49155510")
	t.Logf("linked %d sessions in %s", sessions, time.Since(began).Round(time.Millisecond))
	for _, sess := range linked {
		apptest.Settle(t, network, sess)
	}
	first.Stop(t)

	log, logs := logtest.New(slog.LevelDebug) // debug: a failure shows what each session did
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- app.Run(ctx, cfg, app.Options{Logger: log, Announce: io.Discard, Listener: ln}) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(35 * time.Second):
			t.Error("run did not return within 35 s of cancellation")
		}
	}()

	client := &http.Client{Timeout: time.Second}
	status, body := get(t, client, base+"/healthz")
	healthy := time.Since(start)
	t.Logf("/healthz %d after %s", status, healthy.Round(time.Millisecond))
	if status != http.StatusOK || healthy > time.Second {
		t.Fatalf("/healthz answered %d %s after %s; want 200 within 1 s", status, body, healthy)
	}

	var waiting []string // the distinct 503 answers, in order
	var ready time.Duration
	for deadline := start.Add(120 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, body := get(t, client, base+"/readyz")
		if status == http.StatusOK {
			ready = time.Since(start)
			break
		}
		if status != http.StatusServiceUnavailable {
			t.Fatalf("/readyz answered %d %s while starting; want 503", status, body)
		}
		if len(waiting) == 0 || waiting[len(waiting)-1] != body {
			waiting = append(waiting, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %s 120 s after the start", body)
		}
	}
	t.Logf("/readyz 200 after %s; before that: %q", ready.Round(time.Millisecond), waiting)
	if len(waiting) == 0 || waiting[len(waiting)-1] != `{"status":"starting","sessions":"restoring"}` {
		t.Errorf("/readyz before 200: %q; want 503 {\"status\":\"starting\",\"sessions\":\"restoring\"} while the sessions start", waiting)
	}
	for _, body := range waiting {
		if body != `{"status":"starting","storage":"opening"}` && body != `{"status":"starting","sessions":"restoring"}` {
			t.Errorf("/readyz answered 503 %s while starting", body)
		}
	}

	// Ready means every session has been started: none is left as the
	// previous process left it (DISCONNECTED).
	statuses := sessionStatuses(t, base)
	if n := len(statuses); n != sessions {
		t.Fatalf("%d sessions listed, want %d", n, sessions)
	}
	var notStarted []string
	for id, st := range statuses {
		if st != "CONNECTING" && st != "CONNECTED" {
			t.Errorf("session %s is %s once /readyz is 200; want CONNECTING or CONNECTED", id, st)
			notStarted = append(notStarted, id)
		}
	}
	if len(notStarted) > 0 { // what the server did with one of them
		t.Logf("the log of session %s: %q", notStarted[0], logs.Lines(notStarted[0]))
	}
	if t.Failed() { // what the cluster's ticks did (PostgreSQL)
		for _, msg := range []string{"joined the cluster", "took sessions", "gave sessions to the other processes", "lost the lease of a session: another process holds it"} {
			t.Logf("%s: %q", msg, logs.Lines(msg))
		}
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		statuses = sessionStatuses(t, base)
		connected := 0
		for _, st := range statuses {
			if st == "CONNECTED" {
				connected++
			}
		}
		if connected == sessions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sessions CONNECTED a minute after /readyz turned 200", connected, sessions)
		}
	}
	t.Logf("all %d sessions CONNECTED after %s", sessions, time.Since(start).Round(time.Millisecond))
	if lines := logs.Lines("restoring the session failed"); len(lines) > 0 {
		t.Errorf("restore failures logged: %q", lines)
	}
	for _, sess := range linked {
		apptest.Settle(t, network, sess)
	}
}

// TestRestoreFailureOfOneSession: a linked session whose device cannot be
// loaded (its keys are damaged) is logged with its session_id and left
// DISCONNECTED; the others are restored and the server becomes ready.
func TestRestoreFailureOfOneSession(t *testing.T) {
	network, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control

	first := apptest.StartLive(t, cfg)
	linked := linkMany(t, first, 3, "49155520")
	for _, sess := range linked {
		apptest.Settle(t, network, sess)
	}
	first.Stop(t)
	broken := linked[1]
	damageDevice(t, cfg, broken.JID)

	log, logs := logtest.New(nil)
	second := apptest.StartLogged(t, cfg, log) // returns once the restore has ended
	if res := second.Do(t, "GET", "/readyz", "", "", nil); res.Status != http.StatusOK {
		t.Errorf("/readyz %d %s with one session failed; want 200: the others are started", res.Status, res.Body)
	}
	for _, sess := range []apptest.Session{linked[0], linked[2]} {
		second.WaitStatus(t, sess.ID, "CONNECTED", nil)
		second.Track(sess)
	}
	var failed []map[string]any
	for _, r := range logs.Records() {
		if r["msg"] == "restoring the session failed" {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || failed[0]["session_id"] != broken.ID || failed[0]["level"] != "ERROR" {
		t.Errorf("restore failures logged: %v; want one error with session_id %s", failed, broken.ID)
	}
	var out struct{ Session struct{ Status string } }
	second.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": broken.ID}, &out)
	if out.Session.Status != "DISCONNECTED" {
		t.Errorf("the session that failed is %s, want DISCONNECTED", out.Session.Status)
	}
}

// damageDevice makes the stored device of jid unreadable to whatsmeow: a
// LID with two dots is no JID (types.ParseJID), on either backend, where
// the key columns' constraints of PostgreSQL refuse keys of a wrong length.
func damageDevice(t *testing.T, cfg config.Config, jid string) {
	t.Helper()
	db, query := openDeviceStore(t, cfg), `UPDATE whatsmeow_device SET lid = 'not.a.jid@lid' WHERE jid = ?`
	if cfg.DatabaseURL != "" {
		query = strings.Replace(query, "?", "$1", 1)
	}
	res, err := db.Exec(query, jid)
	if err != nil {
		t.Fatalf("damage device %s: %v", jid, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("damage device %s: %d rows", jid, n)
	}
}

// openDeviceStore opens whatsmeow's device store of a server that is not
// running: its SQLite file in the data directory, or the PostgreSQL
// database it shares with the product.
func openDeviceStore(t *testing.T, cfg config.Config) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+filepath.Join(cfg.DataDir, "whatsmeow.db")+"?_busy_timeout=10000"
	if cfg.DatabaseURL != "" {
		driver, dsn = storage.PostgresDriver, cfg.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// linkMany links n sessions to the phones prefix+00001… through the
// server's API, eight at a time, as a client would: create, connect, wait
// for the QR code, have the simulated phone scan it.
func linkMany(t *testing.T, s *apptest.Server, n int, prefix string) []apptest.Session {
	t.Helper()
	out := make([]apptest.Session, n)
	errs := make([]error, n)
	// The first alone: libsignal sets its global logger at its first use,
	// unlocked, and two first uses at once are a data race (upstream).
	out[0], errs[0] = link(s.URL, fmt.Sprintf("%s%05d", prefix, 1))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = link(s.URL, fmt.Sprintf("%s%05d", prefix, i+1))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, sess := range out {
		s.Track(sess)
	}
	return out
}

func link(base, phone string) (apptest.Session, error) {
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := adminGraphQL(base, `mutation { createSession { session { id } } }`, nil, &created); err != nil {
		return apptest.Session{}, err
	}
	id := created.CreateSession.Session.ID
	if err := adminGraphQL(base, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil); err != nil {
		return apptest.Session{}, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var st struct {
			Session struct{ Status, QrCode string }
		}
		if err := adminGraphQL(base, `query($id: ID!) { session(id: $id) { status qrCode } }`, map[string]any{"id": id}, &st); err != nil {
			return apptest.Session{}, err
		}
		if st.Session.Status == "PAIRING" && st.Session.QrCode != "" {
			break
		}
		if time.Now().After(deadline) {
			return apptest.Session{}, fmt.Errorf("session %s: no QR code within 30 s (%s)", id, st.Session.Status)
		}
	}
	var linked struct{ SandboxLinkDevice struct{ Status, Jid string } }
	if err := adminGraphQL(base, `mutation($id: ID!, $phone: String!) { sandboxLinkDevice(sessionId: $id, phone: $phone) { status jid } }`,
		map[string]any{"id": id, "phone": phone}, &linked); err != nil {
		return apptest.Session{}, err
	}
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		return apptest.Session{}, fmt.Errorf("linked session %s is %s", id, linked.SandboxLinkDevice.Status)
	}
	return apptest.Session{ID: id, Phone: phone, JID: linked.SandboxLinkDevice.Jid}, nil
}

// sessionStatuses returns the status of every session by id.
func sessionStatuses(t *testing.T, base string) map[string]string {
	t.Helper()
	var out struct{ Sessions []struct{ ID, Status string } }
	if err := adminGraphQL(base, `{ sessions { id status } }`, nil, &out); err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string, len(out.Sessions))
	for _, s := range out.Sessions {
		m[s.ID] = s.Status
	}
	return m
}

// get returns the status and the trimmed body of GET url; a failure to get
// an answer fails the test.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return res.StatusCode, string(bytes.TrimSpace(b))
}

// adminGraphQL runs one operation as the admin; safe from any goroutine.
func adminGraphQL(base, query string, vars map[string]any, v any) error {
	return testclient.GraphQL(context.Background(), http.DefaultClient, base, apptest.AdminToken, query, vars, v)
}
