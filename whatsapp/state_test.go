package whatsapp

import (
	"encoding/json"
	"testing"
	"time"
)

// TestAppliedFollowsTheManager: the state a watcher builds from a
// session's events alone (the stored record it started from, then Applied
// to each connection.update and creds.update) is the manager's own state
// after each step of a session's life: pairing by QR, a disconnect, a
// reconnect, a logout. A change the manager makes to its state that its
// events do not tell (or that Applied reads differently) fails here.
func TestAppliedFollowsTheManager(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	const id = "s1"
	// followed is the state rebuilt from the events published so far.
	followed := func() SessionState {
		st := StoredState(StatusRecord{Status: StatusDisconnected})
		for _, ev := range e.pub.events(id) {
			data, err := json.Marshal(ev.Data)
			if err != nil {
				t.Fatal(err)
			}
			st = st.Applied(ev.Kind, data, func() time.Time { return e.statuses.get(id).ConnectedAt })
		}
		return st
	}
	check := func(step string) {
		t.Helper()
		got, want := followed(), m.State(id)
		ct := got.ConnectedAt.Equal(want.ConnectedAt)
		got.ConnectedAt, want.ConnectedAt = time.Time{}, time.Time{}
		if got != want || !ct {
			t.Errorf("after %s: the events give %+v, the manager shows %+v (connectedAt equal: %v)", step, got, want, ct)
		}
	}
	e.pairQR(m, id, phone)
	check("pairing by QR")
	if err := m.Disconnect(id); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, id, StatusDisconnected)
	check("a disconnect")
	if err := m.Connect(ctx, id); err != nil {
		t.Fatal(err)
	}
	e.settle(e.waitStatus(m, id, StatusConnected))
	check("a reconnect")
	// WhatsApp's notice of a limit is a connection.update with its own
	// reason that changes no state.
	if err := e.net.ReachoutTimelock(phone, time.Hour); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, id, "the limit's connection.update", func(SessionState) bool {
		for _, ev := range e.pub.events(id) {
			if ev.Kind == KindConnectionUpdate && ev.Data["limits"] != nil {
				return true
			}
		}
		return false
	})
	check("a reach-out timelock")
	if err := m.Logout(ctx, id); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, id, StatusLoggedOut)
	check("a logout")
}

// TestStoredStates: what a status read shows of a session from its record
// alone: one another process runs shows the record as saved, its reason
// too; one nobody runs reads as the manager loads it, a status left behind
// DISCONNECTED with the reason, an ended one with the reason saved.
func TestStoredStates(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	jid := "4915550001:3@s.whatsapp.net"
	for _, tc := range []struct {
		rec          StatusRecord
		held, unheld SessionState
	}{
		{StatusRecord{Status: StatusConnected, JID: jid, PushName: "Ada", ConnectedAt: at},
			SessionState{Status: StatusConnected, JID: jid, Phone: "4915550001", PushName: "Ada", ConnectedAt: at},
			SessionState{Status: StatusDisconnected, Reason: UnheldReason, JID: jid, Phone: "4915550001", PushName: "Ada", ConnectedAt: at}},
		{StatusRecord{Status: StatusPairing},
			SessionState{Status: StatusPairing},
			SessionState{Status: StatusDisconnected, Reason: UnheldReason}},
		{StatusRecord{Status: StatusLoggedOut},
			SessionState{Status: StatusLoggedOut},
			SessionState{Status: StatusLoggedOut}},
		{StatusRecord{Status: StatusDisconnected, Reason: pairingTimeoutReason},
			SessionState{Status: StatusDisconnected, Reason: pairingTimeoutReason},
			SessionState{Status: StatusDisconnected, Reason: pairingTimeoutReason}},
		{StatusRecord{Status: StatusConnecting, Reason: "the connection was lost: reconnecting", JID: jid},
			SessionState{Status: StatusConnecting, Reason: "the connection was lost: reconnecting", JID: jid, Phone: "4915550001"},
			SessionState{Status: StatusDisconnected, Reason: UnheldReason, JID: jid, Phone: "4915550001"}},
		{StatusRecord{Status: StatusDisconnected, Reason: shutdownReason},
			SessionState{Status: StatusDisconnected, Reason: shutdownReason},
			SessionState{Status: StatusDisconnected, Reason: RestartedReason}},
		{StatusRecord{},
			SessionState{Status: StatusDisconnected},
			SessionState{Status: StatusDisconnected}},
	} {
		if got := HeldState(tc.rec); got != tc.held {
			t.Errorf("HeldState(%+v) = %+v, want %+v", tc.rec, got, tc.held)
		}
		if got := UnheldState(tc.rec); got != tc.unheld {
			t.Errorf("UnheldState(%+v) = %+v, want %+v", tc.rec, got, tc.unheld)
		}
	}
}
