package whatsapp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/proto/waSyncAction"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
)

// critical is the app state collection of the push name.
const critical = string(appstate.WAPatchCriticalBlock)

// loggedManager is env.manager logging to a buffer the test reads.
func (e *env) loggedManager() (*Manager, *logtest.Buffer) {
	buf := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := NewManager(ManagerOptions{Store: e.store, Logger: log, Publisher: e.pub, Statuses: e.statuses, Transport: e.net.Transport()})
	e.t.Cleanup(m.Close)
	return m, buf
}

// storedVersion is the version of collection critical_block in the device
// store of session id.
func storedVersion(t *testing.T, m *Manager, id string) (uint64, [128]byte) {
	t.Helper()
	cli, err := m.client(id)
	if err != nil {
		t.Fatal(err)
	}
	v, hash, err := cli.Store.AppState.GetAppStateVersion(ctx, critical)
	if err != nil {
		t.Fatal(err)
	}
	return v, hash
}

// TestProfileNameWritesTakeTurns: parallel profile-name updates of one
// session queue for the session's app state instead of building patches on
// the same stored state. Every one goes through, each lands on the network
// as one version, the session and the account's other device end with the
// name written last, and the stored state still matches the network's, so
// the next update works too.
func TestProfileNameWritesTakeTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	e.pairQR(m, "s2", phone) // another linked device of the same account
	// whatsmeow fetches a collection at version 0 as a full sync, which
	// emits no events: the other device learns names from the patches after
	// the warm-up.
	if err := m.SetProfileName(ctx, "s1", "Warm up"); err != nil {
		t.Fatal(err)
	}
	// The phone gave each device its state at link (a first patch of its
	// own): the other device has fetched the warm-up once it stands where
	// the network does.
	e.waitUntil("the other device fetched the warm-up patch", func() bool {
		v, _ := storedVersion(t, m, "s2")
		return v == e.net.AppStateVersion(phone, critical)
	})

	for round, n := range []int{5, 8} {
		before := e.net.AppStateVersion(phone, critical)
		names := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range names {
			names[i] = fmt.Sprintf("Parallel %d.%d", round, i)
			wg.Go(func() { errs[i] = m.SetProfileName(ctx, "s1", names[i]) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: update %q: %v", round, names[i], err)
			}
		}
		if got := e.net.AppStateVersion(phone, critical); got != before+uint64(n) {
			t.Errorf("round %d: network critical_block version %d, want %d (one patch per update)", round, got, before+uint64(n))
		}
		last := e.net.PushName(phone)
		if !strings.HasPrefix(last, fmt.Sprintf("Parallel %d.", round)) {
			t.Fatalf("round %d: network push name %q is none of %v", round, last, names)
		}
		// The session follows its own writes synchronously: no waiting.
		if got := m.State("s1").PushName; got != last {
			t.Errorf("round %d: session push name %q, the network holds %q", round, got, last)
		}
		if rec := e.statuses.get("s1"); rec.PushName != last {
			t.Errorf("round %d: persisted push name %q, the network holds %q", round, rec.PushName, last)
		}
		if v, _ := storedVersion(t, m, "s1"); v != before+uint64(n) {
			t.Errorf("round %d: stored critical_block version %d, the network is at %d", round, v, before+uint64(n))
		}
		e.waitState(m, "s2", "the other device learning "+last, func(st SessionState) bool { return st.PushName == last })
	}

	if err := m.SetProfileName(ctx, "s1", "After"); err != nil {
		t.Fatalf("update after the parallel ones: %v", err)
	}
	if got, want := e.net.PushName(phone), "After"; got != want {
		t.Errorf("network push name %q, want %q", got, want)
	}
	if got := m.State("s1").PushName; got != "After" {
		t.Errorf("session push name %q, want After", got)
	}
	e.waitState(m, "s2", "the other device learning After", func(st SessionState) bool { return st.PushName == "After" })
	// The other device's stored state matches too: it can write next.
	if err := m.SetProfileName(ctx, "s2", "From s2"); err != nil {
		t.Fatalf("update from the other device: %v", err)
	}
	e.waitState(m, "s1", "s1 learning the other device's name", func(st SessionState) bool { return st.PushName == "From s2" })
	e.settle(m.State("s1"))
	e.settle(m.State("s2"))
}

// TestProfileNameRecoversABrokenAppState: a session whose stored app state no
// longer matches the network's (as parallel writes of an earlier version
// left it) fails whatsmeow's own write for good; the profile-name update
// syncs the collection again in full, logs why at warn, and goes through,
// and the updates after it need no recovery.
func TestProfileNameRecoversABrokenAppState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// breakState corrupts the stored state of collection critical_block,
		// at version v with hash h before the latest update.
		breakState func(t *testing.T, cli *whatsmeow.Client, v uint64, h [128]byte)
	}{
		{
			// What racing writes leave: the version and hash of an earlier
			// patch under the MACs of a later one.
			name: "version rolled back under newer MACs",
			breakState: func(t *testing.T, cli *whatsmeow.Client, v uint64, h [128]byte) {
				if err := cli.Store.AppState.PutAppStateVersion(ctx, critical, v, h); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "hash of no version",
			breakState: func(t *testing.T, cli *whatsmeow.Client, v uint64, _ [128]byte) {
				var junk [128]byte
				_, _ = rand.Read(junk[:])
				if err := cli.Store.AppState.PutAppStateVersion(ctx, critical, v, junk); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			m, log := e.loggedManager()
			st := e.pairQR(m, "s1", phone)
			if err := m.SetProfileName(ctx, "s1", "First"); err != nil {
				t.Fatal(err)
			}
			v, h := storedVersion(t, m, "s1")
			if err := m.SetProfileName(ctx, "s1", "Second"); err != nil {
				t.Fatal(err)
			}
			cli, err := m.client("s1")
			if err != nil {
				t.Fatal(err)
			}
			tt.breakState(t, cli, v, h)

			// Broken: whatsmeow's write fails, again and again.
			for range 2 {
				err := cli.SendAppState(ctx, appstate.BuildSettingPushName("Never"))
				if !errors.Is(err, appstate.ErrMismatchingLTHash) {
					t.Fatalf("write on the broken state: %v, want a mismatching LTHash", err)
				}
			}
			before := e.net.AppStateVersion(phone, critical)
			if got := e.net.PushName(phone); got != "Second" {
				t.Fatalf("network push name %q after refused writes, want Second", got)
			}

			if err := m.SetProfileName(ctx, "s1", "Recovered"); err != nil {
				t.Fatalf("update on the broken state: %v", err)
			}
			if got := e.net.PushName(phone); got != "Recovered" {
				t.Errorf("network push name %q, want Recovered", got)
			}
			if got := e.net.AppStateVersion(phone, critical); got != before+1 {
				t.Errorf("network critical_block version %d, want %d: one patch taken", got, before+1)
			}
			if got := m.State("s1").PushName; got != "Recovered" {
				t.Errorf("session push name %q, want Recovered", got)
			}
			if v, _ := storedVersion(t, m, "s1"); v != before+1 {
				t.Errorf("stored critical_block version %d, the network is at %d", v, before+1)
			}
			warns := log.Lines("level=WARN", "session_id=s1", "syncing it again in full", "collection=critical_block", "mismatching LTHash")
			if len(warns) != 1 {
				t.Errorf("%d warnings of the recovery, want 1:\n%s", len(warns), strings.Join(log.Lines("level=WARN"), "\n"))
			}

			if err := m.SetProfileName(ctx, "s1", "Later"); err != nil {
				t.Fatalf("update after the recovery: %v", err)
			}
			if got := e.net.PushName(phone); got != "Later" {
				t.Errorf("network push name %q, want Later", got)
			}
			if n := len(log.Lines("syncing it again in full")); n != 1 {
				t.Errorf("%d recoveries, want the one: the recovered state needs none", n)
			}
			e.settle(st)
		})
	}
}

// TestProfileNameGivesUpWaiting: an update waiting for the session's app
// state turn gives up when its request ends, without writing.
func TestProfileNameGivesUpWaiting(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	if err := m.SetProfileName(ctx, "s1", "Kept"); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	s := m.sessions["s1"]
	m.mu.Unlock()
	release, err := s.lockAppState(ctx) // an update that takes its time
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = m.SetProfileName(short, "s1", "Too late")
	wantFault(t, err, fault.WhatsAppTimeout, "session s1", "waiting for the session's earlier account changes")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not carry the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %s", d)
	}
	if got := e.net.PushName(phone); got != "Kept" {
		t.Errorf("network push name %q, want Kept", got)
	}
	release()
	if err := m.SetProfileName(ctx, "s1", "In turn"); err != nil {
		t.Fatalf("update after the turn was free: %v", err)
	}
	if got := e.net.PushName(phone); got != "In turn" {
		t.Errorf("network push name %q, want In turn", got)
	}
	e.settle(st)
}

// TestPushNameEventsInWriteOrder: whatsmeow reports each write's patch back
// as PushNameSetting on a goroutine of its own, so the event of an earlier
// write may come after a later write changed the name; it must not put the
// earlier name back. A name written after the session's (by another device)
// replaces it.
func TestPushNameEventsInWriteOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	if err := m.SetProfileName(ctx, "s1", "Mine"); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	m.mu.Lock()
	s := m.sessions["s1"]
	m.mu.Unlock()
	cli, err := m.client("s1")
	if err != nil {
		t.Fatal(err)
	}
	run := &clientRun{m: m, s: s, cli: cli}
	tests := []struct {
		name  string
		at    time.Time
		event string // the name the event carries
		want  string
	}{
		{"an earlier write's event", written.Add(-time.Second), "Stale", "Mine"},
		{"a later write elsewhere", written.Add(time.Second), "Phone", "Phone"},
		{"an earlier name, late", written.Add(500 * time.Millisecond), "Stale", "Phone"},
		{"the latest write elsewhere", written.Add(2 * time.Second), "Phone 2", "Phone 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evt := &events.PushNameSetting{Timestamp: tt.at, Action: &waSyncAction.PushNameSetting{Name: proto.String(tt.event)}}
			if !run.handleEvent(evt) {
				t.Fatal("the event was not handled")
			}
			if got := m.State("s1").PushName; got != tt.want {
				t.Errorf("session push name %q, want %q", got, tt.want)
			}
			if rec := e.statuses.get("s1"); rec.PushName != tt.want {
				t.Errorf("persisted push name %q, want %q", rec.PushName, tt.want)
			}
		})
	}
	e.settle(st)
}
