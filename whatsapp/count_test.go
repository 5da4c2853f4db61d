package whatsapp

import (
	"maps"
	"testing"
)

// TestCountByStatus: sessions count by the status Status answers for each:
// a held session by its state now, any other as loading it reads it (a
// stale CONNECTED of a dead process is DISCONNECTED); a session held but
// not in the stored list (deleted since) is not counted.
func TestCountByStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "live", phone)
	e.statuses.add("pairing")
	if err := m.Connect(ctx, "pairing"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "pairing", StatusPairing)
	e.statuses.add("held-not-stored")
	if _, err := m.Status(ctx, "held-not-stored"); err != nil {
		t.Fatal(err)
	}
	stored := map[string]Status{
		"live":    StatusConnected,
		"pairing": StatusPairing,
		"stale":   StatusConnected, // left by a process that died
		"old":     StatusConnecting,
		"gone":    StatusLoggedOut,
		"idle":    StatusDisconnected,
		"fresh":   "",
	}
	for id, st := range stored {
		if id == "live" || id == "pairing" {
			continue
		}
		e.statuses.add(id)
		if err := e.statuses.SaveStatus(ctx, id, StatusRecord{Status: st}); err != nil {
			t.Fatal(err)
		}
	}

	got := m.CountByStatus(stored)
	want := map[Status]int{StatusConnected: 1, StatusPairing: 1, StatusDisconnected: 4, StatusLoggedOut: 1, StatusConnecting: 0}
	if !maps.Equal(got, want) {
		t.Errorf("CountByStatus = %v, want %v", got, want)
	}
	// The same story as Status tells, session by session (it loads the
	// ones not held: after the count).
	byStatus := map[Status]int{}
	for _, st := range Statuses() {
		byStatus[st] = 0
	}
	for id := range stored {
		st, err := m.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byStatus[st.Status]++
	}
	if !maps.Equal(got, byStatus) {
		t.Errorf("CountByStatus = %v, but Status of each says %v", got, byStatus)
	}
	if m.CountByStatus(nil)[StatusConnected] != 0 {
		t.Errorf("no stored session, yet some are counted")
	}
}
