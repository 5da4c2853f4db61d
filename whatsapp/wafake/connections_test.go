package wafake_test

import (
	"context"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// counts is the network's connection counts of device.
func counts(n *wafake.Network, device types.JID) wafake.DeviceConnections {
	return n.ConnectionCounts()[device.String()]
}

// wantCounts fails unless the counts of device are want.
func wantCounts(t *testing.T, n *wafake.Network, device types.JID, when string, want wafake.DeviceConnections) {
	t.Helper()
	if got := counts(n, device); got != want {
		t.Errorf("%s: counts of %s %+v, want %+v", when, device, got, want)
	}
}

// TestConnectionCounts: the network counts each device's logged-in
// connections with real whatsmeow clients: how many are open, the most
// open at once, the logins, and the logins that replaced one still open.
func TestConnectionCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, n *wafake.Network, cli *whatsmeow.Client, dev types.JID)
	}{
		{"one client", func(t *testing.T, n *wafake.Network, _ *whatsmeow.Client, dev types.JID) {
			// The pairing connection never logged in: the login that
			// follows PairSuccess is the first.
			wantCounts(t, n, dev, "connected", wafake.DeviceConnections{Open: 1, MaxOpen: 1, Logins: 1})
		}},
		{"a second client of the same device", func(t *testing.T, n *wafake.Network, cli *whatsmeow.Client, dev types.JID) {
			rec := recordEvents(cli)
			settle(t, n, dev)
			// The same device's keys, read from the first client's store,
			// as a second process sharing the store would.
			same, err := cli.Store.Container.(*sqlstore.Container).GetDevice(context.Background(), dev)
			if err != nil || same == nil {
				t.Fatalf("read the device from the store: %v", err)
			}
			other := whatsmeow.NewClient(same, waLog.Noop)
			n.Point(other)
			otherRec := recordEvents(other)
			if err := other.Connect(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				quiesce(n, dev)
				other.Disconnect()
			})
			waitFor[*events.Connected](t, otherRec)
			// Counted in the same step as the login: the first connection
			// was still open on the network when the second logged in.
			if c := counts(n, dev); c.Logins != 2 || c.MaxOpen != 2 || c.Replaced != 1 {
				t.Errorf("after the second login: %+v, want 2 logins, 2 open at once, 1 replaced", c)
			}
			waitFor[*events.StreamReplaced](t, rec)
			testclient.Until(t, 10*time.Second, `counts(n, dev).Open == 1`, func() bool { return counts(n, dev).Open == 1 })
			wantCounts(t, n, dev, "the first closed", wafake.DeviceConnections{Open: 1, MaxOpen: 2, Logins: 2, Replaced: 1})
		}},
		{"disconnect, then reconnect", func(t *testing.T, n *wafake.Network, cli *whatsmeow.Client, dev types.JID) {
			rec := recordEvents(cli)
			settle(t, n, dev)
			cli.Disconnect()
			// A connection counts until the network has seen it closed.
			testclient.Until(t, 10*time.Second, `counts(n, dev).Open == 0`, func() bool { return counts(n, dev).Open == 0 })
			wantCounts(t, n, dev, "disconnected", wafake.DeviceConnections{Open: 0, MaxOpen: 1, Logins: 1})
			if err := cli.Connect(); err != nil {
				t.Fatal(err)
			}
			waitFor[*events.Connected](t, rec)
			wantCounts(t, n, dev, "reconnected", wafake.DeviceConnections{Open: 1, MaxOpen: 1, Logins: 2})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := startNetwork(t)
			if c := n.ConnectionCounts(); len(c) != 0 {
				t.Fatalf("counts %+v on a new network, want none", c)
			}
			cli, ps := linkByQR(t, n, "491701234567")
			tt.run(t, n, cli, ps.ID)
			if c := n.ConnectionCounts(); len(c) != 1 {
				t.Errorf("counts %+v, want the one device's only", c)
			}
		})
	}
}
