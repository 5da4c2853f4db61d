package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// memStatuses is the StatusStore of the tests: the sessions added with add
// exist.
type memStatuses struct {
	mu   sync.Mutex
	recs map[string]StatusRecord
}

func (s *memStatuses) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[id]; !ok {
		s.recs[id] = StatusRecord{Status: StatusDisconnected}
	}
}

func (s *memStatuses) get(id string) StatusRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[id]
}

func (s *memStatuses) LoadStatus(_ context.Context, id string) (StatusRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.recs[id]
	return rec, ok, nil
}

func (s *memStatuses) SaveStatus(_ context.Context, id string, rec StatusRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[id]; !ok {
		return fmt.Errorf("no session %s", id)
	}
	s.recs[id] = rec
	return nil
}

// recorder is the Publisher of the tests: it keeps every event in order,
// with its data as a receiver reads it (the JSON object, decoded).
type recorder struct {
	mu  sync.Mutex
	evs map[string][]published
}

// published is an event as the recorder keeps it.
type published struct {
	Kind    string
	Data    map[string]any
	Message *Message
	History []Message
}

func (r *recorder) Publish(_ context.Context, id string, ev Event) error {
	b, err := json.Marshal(ev.Data)
	if err != nil {
		return fmt.Errorf("encode %s data: %w", ev.Kind, err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		return fmt.Errorf("decode %s data: %w", ev.Kind, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs[id] = append(r.evs[id], published{Kind: ev.Kind, Data: data, Message: ev.Message, History: ev.History})
	return nil
}

func (r *recorder) events(id string) []published {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]published(nil), r.evs[id]...)
}

// statuses lists the statuses of the connection.update events of session
// id from the from-th event on, each run of one status (QR rotations,
// reason changes) once.
func (r *recorder) statuses(id string, from int) []Status {
	var out []Status
	for _, ev := range r.events(id)[from:] {
		if ev.Kind != KindConnectionUpdate {
			continue
		}
		st := Status(ev.Data["status"].(string))
		if len(out) == 0 || out[len(out)-1] != st {
			out = append(out, st)
		}
	}
	return out
}

// env is one test's world: a simulated network, a device store on the run's
// backend, the status store and the publisher the managers share.
type env struct {
	t        *testing.T
	net      *wafake.Network
	store    *sqlstore.Container
	statuses *memStatuses
	pub      *recorder
	log      *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, wafake.Options{})
}

// newEnvOn is newEnv on a network with opts.
func newEnvOn(t *testing.T, opts wafake.Options) *env {
	t.Helper()
	net, err := wafake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	var out io.Writer = io.Discard
	if os.Getenv("WAGRAPH_TEST_LOG") != "" {
		out = os.Stderr
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := openTestStore(t, log)
	return &env{
		t: t, net: net, store: store, log: log,
		statuses: &memStatuses{recs: map[string]StatusRecord{}},
		pub:      &recorder{evs: map[string][]published{}},
	}
}

// openTestStore opens a fresh device store on the run's backend
// (internal/dbtest), as the server opens it: a SQLite file in the test's
// directory, or, on the PostgreSQL pass of `make test`, a database of the
// test's own through the product's driver. Closed when the test ends.
func openTestStore(t *testing.T, log *slog.Logger) *sqlstore.Container {
	t.Helper()
	var store *sqlstore.Container
	var err error
	if url := dbtest.DatabaseURLWith(t, storeExtension()); url != "" {
		store, err = OpenPostgresStore(context.Background(), storage.PostgresDriver, url, storage.PostgresWhere(url), log)
	} else {
		store, err = OpenStore(context.Background(), filepath.Join(t.TempDir(), "whatsmeow.db"), log)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// storeExtension has the PostgreSQL test databases made with whatsmeow's
// device store in them, as the server makes it at its start (its upgrade
// took half a second a test otherwise).
func storeExtension() dbtest.Extension {
	return dbtest.Extension{Name: "whatsmeow_" + strconv.Itoa(StoreSchemaVersion()), Build: func(ctx context.Context, url string) error {
		st, err := OpenPostgresStore(ctx, storage.PostgresDriver, url, storage.PostgresWhere(url), nil)
		if err == nil {
			err = st.Close()
		}
		return err
	}}
}

// manager returns a new manager on the env's stores, closed when the test
// ends (Close is idempotent).
func (e *env) manager() *Manager {
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses, Transport: e.net.Transport()})
	e.t.Cleanup(m.Close)
	return m
}

// waitState waits until the state of session id satisfies ok.
func (e *env) waitState(m *Manager, id, what string, ok func(SessionState) bool) SessionState {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := m.State(id)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("session %s: no %s within 15 s; state %+v; events %+v", id, what, st, e.pub.events(id))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStatus waits until session id is in status want and the last
// connection.update published says so (the state changes in memory first,
// then is persisted and published).
func (e *env) waitStatus(m *Manager, id string, want Status) SessionState {
	e.t.Helper()
	return e.waitState(m, id, string(want), func(st SessionState) bool {
		got := e.pub.statuses(id, 0)
		return st.Status == want && len(got) > 0 && got[len(got)-1] == want
	})
}

// waitUntil polls cond for up to 15 s (this package's bound: a whatsmeow
// client on a loaded machine takes seconds to connect).
func (e *env) waitUntil(what string, cond func() bool) {
	e.t.Helper()
	testclient.Until(e.t, 15*time.Second, what, cond)
}

// settle waits until the device has acknowledged everything the network
// sent it: whatsmeow's FrameSocket.SendFrame reads its conn without a lock,
// so closing a socket while a receipt is being sent is a data race inside
// whatsmeow (see the wafake tests).
func (e *env) settle(st SessionState) {
	e.t.Helper()
	jid := parseJID(e.t, st.JID)
	e.waitUntil("the device acknowledged everything", func() bool { return e.net.Unacked(jid) == 0 })
}

// pairQR connects a new session id and has the phone of account phone scan
// its QR code; it returns the state once CONNECTED and settled.
func (e *env) pairQR(m *Manager, id, phone string) SessionState {
	e.t.Helper()
	e.statuses.add(id)
	if err := m.Connect(context.Background(), id); err != nil {
		e.t.Fatal(err)
	}
	st := e.waitState(m, id, "QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
	e.waitStatus(m, id, StatusPairing)
	if err := e.net.ScanQR(st.QRCode, phone); err != nil {
		e.t.Fatal(err)
	}
	st = e.waitStatus(m, id, StatusConnected)
	e.settle(st)
	return st
}

// devices counts the devices in the device store.
func (e *env) devices() int {
	e.t.Helper()
	devs, err := e.store.GetAllDevices(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(devs)
}

func parseJID(t *testing.T, s string) types.JID {
	t.Helper()
	jid, err := types.ParseJID(s)
	if err != nil || s == "" {
		t.Fatalf("JID %q: %v", s, err)
	}
	return jid
}

// wantFault checks err is a fault of code whose message contains each of
// parts.
func wantFault(t *testing.T, err error, code fault.Code, parts ...string) {
	t.Helper()
	f := fault.From(err)
	if f == nil || f.Code != code {
		t.Fatalf("error %v (%T), want a %s fault", err, errors.Unwrap(err), code)
	}
	for _, p := range parts {
		if !strings.Contains(f.Message, p) {
			t.Errorf("message %q does not contain %q", f.Message, p)
		}
	}
}
