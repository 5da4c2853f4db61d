package whatsapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestVersions: auto mode adopts a newer version from the network's web
// page (and only a newer one), tells its listeners and reads at once after
// a refusal; builtin and pinned modes never read.
func TestVersions(t *testing.T) {
	t.Parallel()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	builtin := store.GetWAVersion()
	newer := store.WAVersionContainer{builtin[0], builtin[1], builtin[2] + 7}

	auto, err := NewVersions(VersionOptions{Setting: VersionSetting{Mode: VersionAuto}, HTTPClient: n.HTTPClient(), Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	told := make(chan struct{}, 4)
	auto.OnNewer(func() { told <- struct{}{} })
	if changed, err := auto.Refresh(t.Context()); err != nil || changed || auto.Current() != builtin {
		t.Fatalf("same version on the page: changed %v, %v, current %s", changed, err, auto.Current())
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); auto.Run(ctx) }()
	n.RequireClientVersion(newer)
	auto.Refused() // as a session refused as outdated does
	select {
	case <-told:
	case <-time.After(10 * time.Second):
		t.Fatal("a refusal did not make auto mode read the page")
	}
	if auto.Current() != newer {
		t.Errorf("current %s after the read; want %s", auto.Current(), newer)
	}
	cancel()
	<-done

	n.RequireClientVersion(store.WAVersionContainer{}) // the page names an older one again
	if changed, err := auto.Refresh(t.Context()); err != nil || changed || auto.Current() != newer {
		t.Errorf("an older version on the page: changed %v, %v, current %s; want %s kept", changed, err, auto.Current(), newer)
	}
	jid := types.NewADJID("491701234567", 0, 1)
	p := auto.payload(&store.Device{ID: &jid})
	if v := p.GetUserAgent().GetAppVersion(); v.GetTertiary() != newer[2] {
		t.Errorf("the client payload announces %v; want %s", v, newer)
	}

	n.RequireClientVersion(newer)
	fixed, err := NewVersions(VersionOptions{Setting: VersionSetting{Mode: VersionBuiltin}, HTTPClient: n.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	if changed, _ := fixed.Refresh(t.Context()); changed || fixed.Current() != builtin {
		t.Errorf("builtin mode read the page: current %s", fixed.Current())
	}
	pinned, err := NewVersions(VersionOptions{Setting: VersionSetting{Mode: VersionPinned, Pinned: store.WAVersionContainer{2, 3000, 1040000000}}})
	if err != nil || pinned.Current() != (store.WAVersionContainer{2, 3000, 1040000000}) {
		t.Errorf("pinned: %v %v", pinned, err)
	}
	if _, err := NewVersions(VersionOptions{Setting: VersionSetting{Mode: VersionPinned}}); err == nil {
		t.Error("pinned mode without a version accepted")
	}
}

// TestParseVersionSetting: --wa-version is read once, at settings time,
// into its mode and pinned version; what is refused says what is wanted,
// and a setting reads back as it was written.
func TestParseVersionSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want VersionSetting
		err  bool
	}{
		{in: "auto", want: VersionSetting{Mode: VersionAuto}},
		{in: " builtin ", want: VersionSetting{Mode: VersionBuiltin}},
		{in: "2.3000.1045649367", want: VersionSetting{Mode: VersionPinned, Pinned: store.WAVersionContainer{2, 3000, 1045649367}}},
		{in: "", err: true},
		{in: "latest", err: true},
		{in: "2.3000", err: true},
		{in: "2.3000.x", err: true},
		{in: "x.y.z", err: true},
		{in: "0.0.0", err: true},
		{in: "3.3000.1", err: true},
		{in: "2.0.1", err: true},
		{in: "2.3000.1.4", err: true},
		{in: "2.3000.99999999999", err: true},
	} {
		got, err := ParseVersionSetting(tc.in)
		switch {
		case tc.err && (err == nil || err.Error() != "want auto, builtin or a version such as 2.3000.1045649367"):
			t.Errorf("ParseVersionSetting(%q) = %v, %v; want the error saying what is wanted", tc.in, got, err)
		case !tc.err && (err != nil || got != tc.want):
			t.Errorf("ParseVersionSetting(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case !tc.err && got.String() != strings.TrimSpace(tc.in):
			t.Errorf("ParseVersionSetting(%q).String() = %q", tc.in, got.String())
		}
	}
	if (VersionSetting{}).String() != "auto" {
		t.Errorf("the zero setting is %q, want auto", VersionSetting{}.String())
	}
}

// TestOutdatedSessionEvent: a session WhatsApp refuses as outdated is
// DISCONNECTED with the reason naming the refused version, published as
// connection.update, and is connected again when the keeper learns a newer
// version.
func TestOutdatedSessionEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	versions, err := NewVersions(VersionOptions{Setting: VersionSetting{Mode: VersionAuto}, HTTPClient: e.net.HTTPClient(), Logger: e.log, Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses, Transport: e.net.Transport(), Versions: versions})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", "491701234567")
	builtin := store.GetWAVersion()
	newer := store.WAVersionContainer{builtin[0], builtin[1], builtin[2] + 1}
	from := len(e.pub.events("s1"))

	e.net.RequireClientVersion(newer)
	want := "client outdated: WhatsApp refused version " + builtin.String()
	e.waitState(m, "s1", "the refusal", func(st SessionState) bool { return st.Status == StatusDisconnected && st.Reason == want })
	e.waitUntil("the refusal published", func() bool {
		for _, ev := range e.pub.events("s1")[from:] {
			if ev.Kind == KindConnectionUpdate && ev.Data["status"] == string(StatusDisconnected) && ev.Data["reason"] == want {
				return true
			}
		}
		return false
	})

	// The keeper reads the network's page (the refusal asked it to when
	// its Run is going; here the test reads), and the session comes back.
	if changed, err := versions.Refresh(t.Context()); err != nil || !changed {
		t.Fatalf("refresh: changed %v, %v", changed, err)
	}
	e.settle(e.waitStatus(m, "s1", StatusConnected))
	if got := m.State("s1"); got.Reason != "" || got.JID != st.JID {
		t.Errorf("back as %+v; want the same device, no reason", got)
	}
}
