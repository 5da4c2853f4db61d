package wafake_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waServerSync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
)

const critical = string(appstate.WAPatchCriticalBlock)

// waitAppStateKey waits until the phone's key share reached cli.
func waitAppStateKey(t *testing.T, cli *whatsmeow.Client) {
	t.Helper()
	testclient.Until(t, 10*time.Second, "the app state sync key stored", func() bool {
		id, err := cli.Store.AppStateKeys.GetLatestAppStateSyncKeyID(context.Background())
		return err == nil && id != nil
	})
}

// TestPushNameThroughAppState: the phone shares the app state key with a new
// linked device, and gives it the name the account goes by (version 1 of
// critical_block); the device can then set the account's push name with an
// app state patch, which the network decrypts; the device's follow-up sync
// of the collection verifies against the version the network stamped. The
// account's other linked device is told (server_sync), fetches the patch
// and learns the name.
func TestPushNameThroughAppState(t *testing.T) {
	t.Parallel()
	const phone = "491701234567"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	other, _ := linkSettled(t, n, phone)
	learned := eventsOf[*events.PushNameSetting](other)
	ctx := context.Background()
	for _, c := range []*whatsmeow.Client{cli, other} {
		waitAppStateKey(t, c)
		waitAppStateVersion(t, c, 1)
	}
	for i, name := range []string{"Shop Bot", "Shop Bot 2"} {
		i++ // after the phone's name
		if err := cli.SendAppState(ctx, appstate.BuildSettingPushName(name)); err != nil {
			t.Fatalf("set push name %d: %v", i+1, err)
		}
		if got := n.PushName(phone); got != name {
			t.Errorf("network holds push name %q, want %q", got, name)
		}
		if got := n.AppStateVersion(phone, critical); got != uint64(i+1) {
			t.Errorf("network critical_block version %d, want %d", got, i+1)
		}
		version, _, err := cli.Store.AppState.GetAppStateVersion(ctx, critical)
		if err != nil || version != uint64(i+1) {
			t.Errorf("client's critical_block version %d (%v), want %d", version, err, i+1)
		}
		testclient.Until(t, 10*time.Second, "the other device at the patch's version", func() bool {
			v, _, err := other.Store.AppState.GetAppStateVersion(ctx, critical)
			return err == nil && v == uint64(i+1)
		})
		got := nextEvent(t, learned).Action.GetName()
		if got == "Contact "+phone {
			// The phone's name, from the device's first fetch (a full
			// sync), when it came after learned was listening.
			got = nextEvent(t, learned).Action.GetName()
		}
		if got != name {
			t.Errorf("the other device learned push name %q, want %q", got, name)
		}
	}
}

// waitAppStateVersion waits until cli holds critical_block at version v.
func waitAppStateVersion(t *testing.T, cli *whatsmeow.Client, v uint64) {
	t.Helper()
	testclient.Until(t, 10*time.Second, "the device at the collection's version", func() bool {
		got, _, err := cli.Store.AppState.GetAppStateVersion(context.Background(), critical)
		return err == nil && got == v
	})
}

// uploadPatch uploads patch to collection critical_block as built on
// version base, the way whatsmeow's SendAppState does, and returns the
// <collection> of the answer.
func uploadPatch(t *testing.T, cli *whatsmeow.Client, base uint64, patch []byte) waBinary.Node {
	t.Helper()
	resp, err := cli.DangerousInternals().SendIQ(context.Background(), whatsmeow.DangerousInfoQuery{
		Namespace: "w:sync:app:state", Type: "set", To: types.ServerJID,
		Content: []waBinary.Node{{Tag: "sync", Content: []waBinary.Node{{
			Tag:     "collection",
			Attrs:   waBinary.Attrs{"name": critical, "version": base, "return_snapshot": false},
			Content: []waBinary.Node{{Tag: "patch", Content: patch}},
		}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	col, ok := resp.GetOptionalChildByTag("sync", "collection")
	if !ok {
		t.Fatalf("answer without a collection: %s", resp.String())
	}
	return col
}

// TestAppStateUploadOnStaleVersion: a patch built on a version the
// collection has moved past is refused with WhatsApp's 409 conflict, which
// carries the patches the uploader missed; the network keeps nothing of it.
// Taking it would break the LTHash chain for every device replaying the
// collection.
func TestAppStateUploadOnStaleVersion(t *testing.T) {
	t.Parallel()
	const phone = "491701234568"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	waitAppStateKey(t, cli)
	waitAppStateVersion(t, cli, 1) // the phone's name
	ctx := context.Background()
	for _, name := range []string{"One", "Two"} {
		if err := cli.SendAppState(ctx, appstate.BuildSettingPushName(name)); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := proto.Marshal(&waServerSync.SyncdPatch{KeyID: &waServerSync.KeyId{ID: []byte("stale")}})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		base uint64
		want []uint64 // versions of the patches sent back
	}{
		{"one behind", 2, []uint64{3}},
		{"from nothing", 0, []uint64{1, 2, 3}},
		{"ahead", 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := uploadPatch(t, cli, tt.base, stale)
			ag := col.AttrGetter()
			if ag.String("name") != critical || ag.OptionalString("type") != "error" {
				t.Fatalf("answer %s, want a collection critical_block of type error", col.String())
			}
			e, ok := col.GetOptionalChildByTag("error")
			if !ok || e.AttrGetter().Int("code") != 409 || e.AttrGetter().String("text") != "conflict" {
				t.Errorf("answer %s, want <error code=409 text=conflict>", col.String())
			}
			list, err := appstate.ParsePatchList(ctx, &col, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, p := range list.Patches {
				got = append(got, p.GetVersion().GetVersion())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("patches sent back %v, want %v", got, tt.want)
			}
			if v := n.AppStateVersion(phone, critical); v != 3 {
				t.Errorf("network critical_block version %d after a refused upload, want 3", v)
			}
		})
	}
	if got := n.PushName(phone); got != "Two" {
		t.Errorf("network push name %q, want Two", got)
	}
	// The refusals left the chain whole: a full sync verifies every patch,
	// and the device writes on from there.
	if err := cli.FetchAppState(ctx, appstate.WAPatchCriticalBlock, true, false); err != nil {
		t.Fatalf("full sync after the refused uploads: %v", err)
	}
	if err := cli.SendAppState(ctx, appstate.BuildSettingPushName("Three")); err != nil {
		t.Fatal(err)
	}
	if got := n.PushName(phone); got != "Three" {
		t.Errorf("network push name %q, want Three", got)
	}
}
