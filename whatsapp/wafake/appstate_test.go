package wafake_test

import (
	"context"
	"testing"

	"go.mau.fi/whatsmeow/appstate"
)

// TestPushNameThroughAppState: the phone shares the app state key with a new
// linked device; the device can then set the account's push name with an app
// state patch, which the network decrypts; the device's follow-up sync of the
// collection verifies against the version the network stamped.
func TestPushNameThroughAppState(t *testing.T) {
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	ctx := context.Background()
	waitUntil(t, func() bool {
		id, err := cli.Store.AppStateKeys.GetLatestAppStateSyncKeyID(ctx)
		return err == nil && id != nil
	})
	for i, name := range []string{"Shop Bot", "Shop Bot 2"} {
		if err := cli.SendAppState(ctx, appstate.BuildSettingPushName(name)); err != nil {
			t.Fatalf("set push name %d: %v", i+1, err)
		}
		if got := n.PushName(ps.ID.User); got != name {
			t.Errorf("network holds push name %q, want %q", got, name)
		}
		version, _, err := cli.Store.AppState.GetAppStateVersion(ctx, string(appstate.WAPatchCriticalBlock))
		if err != nil || version != uint64(i+1) {
			t.Errorf("client's critical_block version %d (%v), want %d", version, err, i+1)
		}
	}
}
