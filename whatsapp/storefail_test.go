package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestStoreFailureNotAcknowledged (issue 22): texts that arrive while the
// device store fails are not acknowledged (whatsmeow would otherwise send a
// retry receipt, ack the stanza and the text would be lost); the session
// goes down at the first failure and comes back once the store can be
// written, and WhatsApp's re-sent stanzas are then stored, each once. The
// same for a device linked when its client started and for one just paired
// by the client that runs it (its stores are made as the pairing is saved:
// unguarded, a PostgreSQL outage lost two texts of a burst).
func TestStoreFailureNotAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name string
		link func(e *env, m *Manager) SessionState
	}{
		{"linked at start", (*env).linkGuarded},
		{"paired by this client", func(e *env, m *Manager) SessionState { return e.pairQR(m, "s1", phone) }},
	} {
		t.Run(tc.name, func(t *testing.T) { storeFailureNotAcknowledged(t, tc.link) })
	}
}

func storeFailureNotAcknowledged(t *testing.T, link func(e *env, m *Manager) SessionState) {
	e := newEnv(t)
	m := e.manager()
	failing, failures := failingStore(m, "database or disk is full (injected)")
	st := link(e, m)
	e.settle(st)

	failing.Store(true)
	const n = 5
	ids := e.sendTexts(t, n, func(i int) {
		if i == 0 {
			e.waitUntil("the store failed", func() bool { return failures.Load() > 0 })
		}
	})
	e.waitState(m, "s1", "down for the store", func(st SessionState) bool {
		return st.Status == StatusConnecting && st.Reason == reasonStoreFailed
	})
	time.Sleep(1500 * time.Millisecond) // a few failed probes
	if got := e.inbound("s1"); len(got) != 0 {
		t.Fatalf("stored while the store failed: %v", got)
	}

	failing.Store(false)
	e.waitStatus(m, "s1", StatusConnected)
	got := e.storedOnce(t, st, ids)
	if len(got) != n {
		t.Errorf("stored %v, want exactly %v", got, ids)
	}
}

// storedOnce waits until session s1 has stored as many texts as ids and
// checks each of ids is stored exactly once; it returns the counts.
func (e *env) storedOnce(t *testing.T, st SessionState, ids []string) map[string]int {
	t.Helper()
	e.waitUntil("every text stored", func() bool { return len(e.inbound("s1")) >= len(ids) })
	e.settle(st)
	got := e.inbound("s1")
	for _, id := range ids {
		if got[id] != 1 {
			t.Errorf("text %s stored %d times, want once (stored: %v)", id, got[id], got)
		}
	}
	return got
}

// sendTexts has peer send n texts to phone and returns their ids; after,
// when set, runs after each send.
func (e *env) sendTexts(t *testing.T, n int, after func(i int)) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id, err := e.net.SendText(peer, phone, fmt.Sprintf("text %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if after != nil {
			after(i)
		}
	}
	return ids
}

// inbound counts the inbound-message.upsert events of session sid by id.
func (e *env) inbound(sid string) map[string]int {
	out := map[string]int{}
	for _, ev := range e.pub.events(sid) {
		if ev.Kind == KindInboundMessage {
			out[ev.Data["id"].(string)]++
		}
	}
	return out
}

// TestStoreErrorsAreCancellations: every error of a guarded store is a
// cancellation for whatsmeow and still carries its cause; a call whose own
// context ended is no store failure.
func TestStoreErrorsAreCancellations(t *testing.T) {
	cause := errors.New("connection refused")
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		reported bool
	}{
		{"store down", context.Background(), true},
		{"call cancelled", ended, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reported atomic.Int32
			g := &storeGuard{failed: func(error) { reported.Add(1) }}
			err := guard(tc.ctx, g, func() error { return cause })
			if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
				t.Errorf("%v: not both a cancellation and its cause", err)
			}
			if again := g.wrap(tc.ctx, fmt.Errorf("decrypt: %w", err)); !errors.Is(again, cause) || reported.Load() > 1 {
				t.Errorf("wrapped twice: %v, reported %d", again, reported.Load())
			}
			if got := reported.Load() == 1; got != tc.reported {
				t.Errorf("reported %v, want %v", got, tc.reported)
			}
			if err := guard(tc.ctx, g, func() error { return nil }); err != nil {
				t.Errorf("a call that worked: %v", err)
			}
		})
	}
}

// TestStoreFailureLeavesStanzaQueued: with the session kept up through a
// store failure, the texts that could not be decrypted stay unacknowledged
// at WhatsApp (whatsmeow acks them after a plain error: they would be
// lost) and are stored, each once, after the next login.
func TestStoreFailureLeavesStanzaQueued(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	m.storeKeepUp = true
	obs := &countingObserver{}
	m.obs = obs
	failing, failures := failingStore(m, "connection refused (injected)")
	st := e.linkGuarded(m)
	e.settle(st)
	dev := parseJID(t, st.JID)

	failing.Store(true)
	const n = 3
	var ids []string
	for i := range n {
		before := failures.Load()
		id, err := e.net.SendText(peer, phone, fmt.Sprintf("text %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		e.waitUntil("the store failed on "+id, func() bool { return failures.Load() > before })
	}
	// whatsmeow's ack, when it sends one, follows the failed decryption at
	// once; the device stays connected to send it.
	time.Sleep(500 * time.Millisecond)
	if u := e.net.Unacked(dev); u != n {
		t.Errorf("%d texts unacknowledged while the store fails, want %d", u, n)
	}
	if st := m.State("s1"); st.Status != StatusConnected {
		t.Fatalf("status %s, want the session kept up", st.Status)
	}
	if got := obs.storeFailed.Load(); got < n {
		t.Errorf("the observer counted %d store failures, want at least %d (/metrics)", got, n)
	}

	failing.Store(false)
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusConnected)
	e.storedOnce(t, st, ids)
}

// TestStoreFailureThenDisconnect: a session disconnected on request while
// it waits for its store stays DISCONNECTED when the store comes back.
func TestStoreFailureThenDisconnect(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	failing, _ := failingStore(m, "database is locked (injected)")
	st := e.linkGuarded(m)
	e.settle(st)

	failing.Store(true)
	if _, err := e.net.SendText(peer, phone, "during the outage"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "s1", "down for the store", func(st SessionState) bool { return st.Reason == reasonStoreFailed })
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	failing.Store(false)
	time.Sleep(2 * storeProbeEvery)
	if st := m.State("s1"); st.Status != StatusDisconnected {
		t.Errorf("status %s (%s) after a Disconnect during the outage, want DISCONNECTED", st.Status, st.Reason)
	}
}

// failingStore makes m's device store fail, while failing is set, with
// cause; failures counts the calls it failed.
func failingStore(m *Manager, cause string) (failing *atomic.Bool, failures *atomic.Int32) {
	failing, failures = new(atomic.Bool), new(atomic.Int32)
	m.storeFault = func() error {
		if failing.Load() {
			failures.Add(1)
			return errors.New(cause)
		}
		return nil
	}
	return failing, failures
}

// linkGuarded pairs session s1 on m and starts it again: a device being
// paired has no stores to guard yet, its next start guards them.
func (e *env) linkGuarded(m *Manager) SessionState {
	e.t.Helper()
	st := e.pairQR(m, "s1", phone)
	if err := m.Disconnect("s1"); err != nil {
		e.t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusConnected)
	return st
}

// switchProbe is a WriteProbe that fails while failing is set.
type switchProbe struct{ failing atomic.Bool }

func (p *switchProbe) Check(context.Context) error {
	if p.failing.Load() {
		return errors.New("database or disk is full (probe)")
	}
	return nil
}

// TestEventStoreFailureReconnects (issue 22): texts whose events cannot be
// stored are not acknowledged, and the session does not wait for some later
// login: it goes down at the first failure, saying why, and reconnects as
// soon as the write probe succeeds; WhatsApp then sends the texts again and
// each is stored once.
func TestEventStoreFailureReconnects(t *testing.T) {
	e := newEnv(t)
	pub := &outagePublisher{recorder: e.pub}
	probe := &switchProbe{}
	obs := &countingObserver{}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses,
		Transport: e.net.Transport(), Probe: probe, Observer: obs})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", phone)
	dev := parseJID(t, st.JID)

	pub.down.Store(true)
	probe.failing.Store(true)
	const n = 5
	ids := e.sendTexts(t, n, nil)
	e.waitState(m, "s1", "down to recover", func(st SessionState) bool {
		return st.Status == StatusConnecting && st.Reason == reasonEventsFailed
	})
	if obs.storeFailed.Load() == 0 {
		t.Error("the failed store was not counted")
	}
	// The events could be stored again, but the probe still fails: the
	// session stays down.
	pub.down.Store(false)
	time.Sleep(3 * storeProbeEvery)
	if st := m.State("s1"); st.Status != StatusConnecting || st.Reason != reasonEventsFailed {
		t.Fatalf("status %s (%s) while the write probe fails, want CONNECTING (%s)", st.Status, st.Reason, reasonEventsFailed)
	}
	if got := e.inbound("s1"); len(got) != 0 {
		t.Fatalf("stored while down: %v", got)
	}
	if u := e.net.Unacked(dev); u != n {
		t.Fatalf("%d stanzas queued at WhatsApp while down, want the %d texts", u, n)
	}

	probe.failing.Store(false)
	e.waitStatus(m, "s1", StatusConnected)
	e.storedOnce(t, st, ids)
	e.waitUntil("nothing left queued", func() bool { return e.net.Unacked(dev) == 0 })
}

// TestRecoveryWait: recoveries close together wait longer before their
// first probe, up to a minute; the first waits a second.
func TestRecoveryWait(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {7, time.Minute}, {100, time.Minute}} {
		if got := recoveryWait(tc.n); got != tc.want {
			t.Errorf("recoveryWait(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}
