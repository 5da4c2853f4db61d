package whatsapp

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

const phone = "491701234567"

var ctx = context.Background()

// TestQRPairing: a new session pairs by QR through the manager: the phone
// scans the manager's current QR code, the session is CONNECTED, the JID
// is persisted and the events tell the story in order.
func TestQRPairing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)

	jid := parseJID(t, st.JID)
	if jid.User != phone || jid.Device == 0 || st.Phone != phone || st.LID == "" || st.ConnectedAt.IsZero() {
		t.Errorf("connected state %+v", st)
	}
	if st.QRCode != "" || st.Reason != "" {
		t.Errorf("QR %q and reason %q left after connecting", st.QRCode, st.Reason)
	}
	if rec := e.statuses.get("s1"); rec.Status != StatusConnected || rec.JID != st.JID || !rec.ConnectedAt.Equal(st.ConnectedAt) {
		t.Errorf("persisted %+v, want CONNECTED as %s", rec, st.JID)
	}
	if e.devices() != 1 {
		t.Errorf("%d devices in the store, want 1", e.devices())
	}
	want := []Status{StatusConnecting, StatusPairing, StatusConnecting, StatusConnected}
	if got := e.pub.statuses("s1", 0); !slices.Equal(got, want) {
		t.Errorf("connection.update statuses %v, want %v", got, want)
	}
	var sawQR, sawCreds bool
	for _, ev := range e.pub.events("s1") {
		switch {
		case ev.Kind == KindConnectionUpdate && ev.Data["status"] == string(StatusPairing):
			sawQR = sawQR || strings.HasPrefix(ev.Data["qr"].(string), wafake.QRLinkPrefix+"2@")
		case ev.Kind == KindCredsUpdate && ev.Data["jid"] == st.JID:
			sawCreds = ev.Data["phone"] == phone && ev.Data["lid"] == st.LID
		}
	}
	if !sawQR || !sawCreds {
		t.Errorf("QR in PAIRING: %v, creds.update with the JID and LID: %v; events %+v", sawQR, sawCreds, e.pub.events("s1"))
	}

	// Connect is idempotent on a connected session.
	n := len(e.pub.events("s1"))
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if m.State("s1").Status != StatusConnected || len(e.pub.events("s1")) != n {
		t.Errorf("a second Connect changed something: %v", e.pub.statuses("s1", n))
	}
	if _, err := m.client("s1"); err != nil {
		t.Errorf("client of a connected session: %v", err)
	}
}

// TestRestart: a manager closed and rebuilt on the same stores logs the
// linked device in again with Restore, without pairing.
func TestRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	e.statuses.add("idle") // never connected: loaded, not connected
	m.Close()
	if rec := e.statuses.get("s1"); rec.Status != StatusDisconnected || rec.JID != st.JID {
		t.Fatalf("after Close persisted %+v, want DISCONNECTED, still %s", rec, st.JID)
	}
	if err := m.Connect(ctx, "s1"); err == nil {
		t.Error("a closed manager connected")
	}

	n := len(e.pub.events("s1"))
	m2 := e.manager()
	if err := m2.Restore(ctx, []string{"s1", "idle"}); err != nil {
		t.Fatal(err)
	}
	got := e.waitStatus(m2, "s1", StatusConnected)
	if got.JID != st.JID || got.Phone != phone {
		t.Errorf("restored as %+v, want %s", got, st.JID)
	}
	if want := []Status{StatusConnecting, StatusConnected}; !slices.Equal(e.pub.statuses("s1", n), want) {
		t.Errorf("statuses after restart %v, want %v", e.pub.statuses("s1", n), want)
	}
	if d := e.net.LinkedDevices(phone); len(d) != 1 || d[0].String() != st.JID {
		t.Errorf("linked devices %v, want only %s", d, st.JID)
	}
	if s := m2.State("idle"); s.Status != StatusDisconnected || len(e.pub.events("idle")) != 0 {
		t.Errorf("idle session %+v, events %v", s, e.pub.events("idle"))
	}
	e.settle(got)
}

// TestReasonSurvivesRestart: the reason a session ended with is saved with
// its status, so a manager rebuilt on the same stores still tells it: a
// pairing whose QR codes ran out says so, a pairing the shutdown stopped
// says the gateway restarted; loading them publishes nothing new. Before
// the reason was saved both read no reason after the restart.
func TestReasonSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	for _, id := range []string{"timedout", "stopped"} {
		e.statuses.add(id)
		if err := m.Connect(ctx, id); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, id, "QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
	}
	runOutOfQRCodes(t, m, "timedout")
	if st := e.waitStatus(m, "timedout", StatusDisconnected); st.Reason != pairingTimeoutReason {
		t.Fatalf("the timed-out pairing reads %+v, want the reason %q", st, pairingTimeoutReason)
	}
	m.Close()

	m2 := e.manager()
	for _, tc := range []struct{ id, reason string }{
		{"timedout", pairingTimeoutReason},
		{"stopped", RestartedReason},
	} {
		st, err := m2.Status(ctx, tc.id)
		if err != nil || st.Status != StatusDisconnected || st.Reason != tc.reason {
			t.Errorf("%s after the restart: %+v (%v), want DISCONNECTED with the reason %q", tc.id, st, err, tc.reason)
		}
	}
	n := len(e.pub.events("timedout"))
	if err := m2.Restore(ctx, []string{"timedout"}); err != nil {
		t.Fatal(err)
	}
	if evs := e.pub.events("timedout")[n:]; len(evs) != 0 {
		t.Errorf("loading a session as it was saved published %+v, want nothing", evs)
	}
}

// runOutOfQRCodes ends the pairing of session id as whatsmeow's QR channel
// does when its codes run out, which takes it 160 s (60 s for the first
// code, 20 s for each of five more): the session's QR watcher is handed
// that answer at once.
func runOutOfQRCodes(t *testing.T, m *Manager, id string) {
	t.Helper()
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	s.mu.Lock()
	cli := s.cli
	s.mu.Unlock()
	if cli == nil {
		t.Fatalf("session %s runs no client", id)
	}
	(&clientRun{m: m, s: s, cli: cli}).qrTimedOut()
}

// TestRestoreCorrectsStaleStatus: a session whose record says CONNECTED
// from a process that died, without a device, reads DISCONNECTED after
// Restore, persisted and published.
func TestRestoreCorrectsStaleStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.statuses.add("s1")
	if err := e.statuses.SaveStatus(ctx, "s1", StatusRecord{Status: StatusConnected}); err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	if err := m.Restore(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	if rec := e.statuses.get("s1"); rec.Status != StatusDisconnected {
		t.Errorf("persisted %+v", rec)
	}
	if got := e.pub.statuses("s1", 0); !slices.Equal(got, []Status{StatusDisconnected}) {
		t.Errorf("published %v", got)
	}
}

// TestPairPhone: pairing by phone code starts the connection itself, the
// code entered on the phone links the device.
func TestPairPhone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.statuses.add("s1")
	_, err := m.PairPhone(ctx, "s1", "12ab")
	wantFault(t, err, fault.Invalid, "number")
	if f := fault.From(err); f.Field != "number" {
		t.Errorf("field %q", f.Field)
	}
	code, err := m.PairPhone(ctx, "s1", "+"+phone)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 9 || code[4] != '-' {
		t.Fatalf("pairing code %q, want XXXX-XXXX", code)
	}
	if st := m.State("s1"); st.Status != StatusPairing || st.PairingCode != code {
		t.Errorf("state %+v, want PAIRING with code %s", st, code)
	}
	if err := e.net.EnterPairingCode(phone, code); err != nil {
		t.Fatal(err)
	}
	st := e.waitStatus(m, "s1", StatusConnected)
	if parseJID(t, st.JID).User != phone || st.PairingCode != "" {
		t.Errorf("connected state %+v", st)
	}
	if e.statuses.get("s1").JID != st.JID {
		t.Errorf("persisted %+v", e.statuses.get("s1"))
	}
	e.settle(st)
	_, err = m.PairPhone(ctx, "s1", phone)
	wantFault(t, err, fault.Conflict, "already linked")
}

// TestLogout: logging out unlinks the device on the network and deletes
// its store; the session is LOGGED_OUT and pairs anew on the next Connect.
func TestLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	if err := m.Logout(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	st := m.State("s1")
	if st.Status != StatusLoggedOut || st.JID != "" || st.Phone != "" {
		t.Errorf("state after logout %+v", st)
	}
	if rec := e.statuses.get("s1"); rec.Status != StatusLoggedOut || rec.JID != "" {
		t.Errorf("persisted %+v", rec)
	}
	if e.devices() != 0 || len(e.net.LinkedDevices(phone)) != 0 {
		t.Errorf("%d devices in the store, linked %v", e.devices(), e.net.LinkedDevices(phone))
	}
	if got := e.pub.statuses("s1", 0); got[len(got)-1] != StatusLoggedOut {
		t.Errorf("statuses %v, want LOGGED_OUT last", got)
	}
	wantFault(t, m.Logout(ctx, "s1"), fault.NotConnected, "session s1 is not connected (status: LOGGED_OUT)")

	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "s1", "a new QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
}

// TestRemovedFromPhone: the phone unlinking the device logs the session
// out and whatsmeow deletes the device store.
func TestRemovedFromPhone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	if err := e.net.RemoveDevice(parseJID(t, st.JID)); err != nil {
		t.Fatal(err)
	}
	out := e.waitStatus(m, "s1", StatusLoggedOut)
	if !strings.Contains(out.Reason, "removed") || out.JID != "" {
		t.Errorf("state %+v", out)
	}
	e.waitUntil("the device store is deleted", func() bool { return e.devices() == 0 })
	if rec := e.statuses.get("s1"); rec.Status != StatusLoggedOut || rec.JID != "" {
		t.Errorf("persisted %+v", rec)
	}
}

// TestDroppedConnectionReconnects: a connection the network drops comes
// back by itself: CONNECTING, then CONNECTED.
func TestDroppedConnectionReconnects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	n := len(e.pub.events("s1"))
	if err := e.net.DropConnection(parseJID(t, st.JID)); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, "s1", "CONNECTING then CONNECTED", func(SessionState) bool {
		return slices.Equal(e.pub.statuses("s1", n), []Status{StatusConnecting, StatusConnected})
	})
	again := m.State("s1")
	if again.Status != StatusConnected || again.JID != st.JID || !again.ConnectedAt.After(st.ConnectedAt) {
		t.Errorf("state after reconnecting %+v", again)
	}
	e.settle(again)
}

// TestStreamReplaced: another connection of the same device takes over;
// the session is DISCONNECTED and does not fight back.
func TestStreamReplaced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	dev, err := e.store.GetDevice(ctx, parseJID(t, st.JID))
	if err != nil || dev == nil {
		t.Fatalf("device: %v", err)
	}
	other := whatsmeow.NewClient(dev, waLog.Noop)
	e.net.Point(other)
	if err := other.Connect(); err != nil {
		t.Fatal(err)
	}
	out := e.waitStatus(m, "s1", StatusDisconnected)
	if !strings.Contains(out.Reason, "replaced") {
		t.Errorf("reason %q", out.Reason)
	}
	time.Sleep(closeGrace + 300*time.Millisecond)
	if s := m.State("s1"); s.Status != StatusDisconnected {
		t.Errorf("the replaced session came back: %+v", s)
	}
	// wafake closes a replaced socket at once (login.go), so whatsmeow may
	// read the close before the stream error and reconnect once, replacing
	// the other connection in turn; the manager closes that one within
	// closeGrace. Either way the other client ends settled or closed.
	e.waitUntil("the other client logged in or replaced", func() bool { return other.IsLoggedIn() || !other.IsConnected() })
	if other.IsLoggedIn() {
		e.settle(st)
	}
	other.Disconnect()
}

// TestNotConnectedErrors: operations on a session that is not connected
// are refused with NOT_CONNECTED naming the status; unknown sessions are
// NOT_FOUND.
func TestNotConnectedErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.statuses.add("s1")
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusPairing)
	wantFault(t, m.Logout(ctx, "s1"), fault.NotConnected, "session s1 is not connected (status: PAIRING)")
	_, err := m.client("s1")
	wantFault(t, err, fault.NotConnected, "(status: PAIRING)")

	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if st := m.State("s1"); st.Status != StatusDisconnected || st.QRCode != "" {
		t.Errorf("state after Disconnect %+v", st)
	}
	if rec := e.statuses.get("s1"); rec.Status != StatusDisconnected {
		t.Errorf("persisted %+v", rec)
	}
	wantFault(t, m.Logout(ctx, "s1"), fault.NotConnected, "(status: DISCONNECTED)")

	wantFault(t, m.Connect(ctx, "nope"), fault.NotFound, "session nope not found")
	wantFault(t, m.Logout(ctx, "nope"), fault.NotFound, "nope")
	_, err = m.PairPhone(ctx, "nope", phone)
	wantFault(t, err, fault.NotFound, "nope")
	if err := m.Delete(ctx, "nope"); err != nil { // no record, never loaded: nothing to forget
		t.Errorf("Delete of an unknown session: %v", err)
	}
}

// TestDelete: deleting a linked session (its record first, as the app
// does) unlinks the device and forgets it.
func TestDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	n := len(e.pub.events("s1"))
	e.statuses.remove("s1")
	if err := m.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if e.devices() != 0 || len(e.net.LinkedDevices(phone)) != 0 {
		t.Errorf("%d devices in the store, linked %v", e.devices(), e.net.LinkedDevices(phone))
	}
	if st := m.State("s1"); st.Status != StatusDisconnected || st.JID != "" {
		t.Errorf("state of a deleted session %+v", st)
	}
	if evs := e.pub.events("s1")[n:]; len(evs) != 0 {
		t.Errorf("events after delete: %+v", evs)
	}
}

// TestNoGoroutineLeftAfterClose: Close ends every goroutine the manager and
// its clients started, connected and pairing ones alike.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	e := newEnv(t)
	before := runtime.NumGoroutine()
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses, Transport: e.net.Transport()})
	e.pairQR(m, "s1", phone)
	e.statuses.add("s2")
	if err := m.Connect(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s2", StatusPairing)
	m.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range []string{"s1", "s2"} {
		if st := m.State(id); st.Status != StatusDisconnected {
			t.Errorf("%s after Close: %+v", id, st)
		}
	}
}
