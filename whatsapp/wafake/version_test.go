package wafake_test

import (
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"
)

// TestRequireClientVersion: with a minimum above the client's version the
// network drops the client and answers its reconnect 405 (whatsmeow's
// ClientOutdated), and its web page names the minimum as the current
// version, as WhatsApp Web's does. With the minimum met again the client
// logs in.
func TestRequireClientVersion(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	rec := recordEvents(cli)
	settle(t, n, ps.ID)

	builtin := store.GetWAVersion()
	if got, err := whatsmeow.GetLatestVersion(t.Context(), n.HTTPClient()); err != nil || *got != builtin {
		t.Fatalf("web page version %v (%v); want whatsmeow's own %s while nothing is required", got, err, builtin)
	}
	newer := store.WAVersionContainer{builtin[0], builtin[1], builtin[2] + 1}
	n.RequireClientVersion(newer)
	if _, before := waitFor[*events.ClientOutdated](t, rec); len(without[*events.Disconnected](before)) != 0 {
		t.Errorf("before ClientOutdated: %s", describe(before))
	}
	if got, err := whatsmeow.GetLatestVersion(t.Context(), n.HTTPClient()); err != nil || *got != newer {
		t.Fatalf("web page version %v (%v); want the minimum %s", got, err, newer)
	}
	quiet(t, rec, 300*time.Millisecond) // refused, it stays away
	if n.DropConnection(ps.ID) == nil {
		t.Fatal("the network holds a login below the minimum")
	}

	n.RequireClientVersion(store.WAVersionContainer{})
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	waitFor[*events.Connected](t, rec)
}
