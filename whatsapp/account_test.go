package whatsapp

import (
	"image/color"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// privacyOfNetwork is the network's privacy settings of phone in the
// manager's terms.
func (e *env) privacyOfNetwork(phone string) Privacy {
	e.t.Helper()
	acct, ok := e.net.Account(phone)
	if !ok {
		e.t.Fatalf("no account %s", phone)
	}
	return privacyOf(acct.Privacy)
}

// TestAccount drives the account operations of the manager through a real
// client against the network, and checks what the network holds after each.
func TestAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	own := userJID(phone)

	// Own profile picture, by the own number; another number is refused.
	pic := testJPEG(t, color.RGBA{B: 200, A: 255})
	if err := m.SetPicture(ctx, "s1", own, pic); err != nil {
		t.Fatal(err)
	}
	if acct, _ := e.net.Account(phone); acct.PictureSHA256 != sha(pic) {
		t.Errorf("network picture %s, want %s", acct.PictureSHA256, sha(pic))
	}
	wantFault(t, m.SetPicture(ctx, "s1", own, []byte("GIF89a not a jpeg")), fault.Unsupported, "JPEG")
	if acct, _ := e.net.Account(phone); acct.PictureSHA256 != sha(pic) {
		t.Errorf("a refused picture replaced the picture")
	}

	// Profile name: the network holds it and the session follows.
	for _, name := range []string{"Shop Bot", "Shop Bot 2"} {
		if err := m.SetProfileName(ctx, "s1", name); err != nil {
			t.Fatal(err)
		}
		if got := e.net.PushName(phone); got != name {
			t.Errorf("network push name %q, want %q", got, name)
		}
		if got := m.State("s1").PushName; got != name {
			t.Errorf("session push name %q, want %q", got, name)
		}
		if rec := e.statuses.get("s1"); rec.PushName != name {
			t.Errorf("persisted push name %q, want %q", rec.PushName, name)
		}
		var told bool
		for _, ev := range e.pub.events("s1") {
			told = told || (ev.Kind == KindCredsUpdate && ev.Data["pushName"] == name)
		}
		if !told {
			t.Errorf("no creds.update with pushName %q", name)
		}
	}

	// Privacy: read fresh, also after the phone changed a setting.
	p, err := m.Privacy(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := e.privacyOfNetwork(phone); p != want || p.LastSeen != "all" || p.ReadReceipts != "all" {
		t.Errorf("Privacy = %+v, want %+v", p, want)
	}
	if err := e.net.SetPrivacy(phone, types.PrivacySettingTypeLastSeen, types.PrivacySettingContacts); err != nil {
		t.Fatal(err)
	}
	if p, err := m.Privacy(ctx, "s1"); err != nil || p.LastSeen != "contacts" {
		t.Errorf("Privacy after the phone's change = %+v, %v; want lastSeen contacts", p, err)
	}
	sets := []struct{ setting, value string }{
		{"readreceipts", "none"},
		{"groupadd", "contacts"},
		{"status", "contact_blacklist"},
		{"groupadd", "none"},
		{"readreceipts", "all"},
	}
	for _, tt := range sets {
		t.Run("privacy "+tt.setting+" "+tt.value, func(t *testing.T) {
			got, err := m.SetPrivacy(ctx, "s1", tt.setting, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			want := e.privacyOfNetwork(phone)
			if got != want {
				t.Errorf("SetPrivacy returned %+v; the network holds %+v", got, want)
			}
			var held string
			switch tt.setting {
			case "readreceipts":
				held = want.ReadReceipts
			case "groupadd":
				held = want.GroupsAdd
			case "status":
				held = want.Status
			}
			if held != tt.value || want.LastSeen != "contacts" {
				t.Errorf("network privacy %+v, want %s %s and lastSeen contacts kept", want, tt.setting, tt.value)
			}
		})
	}
	_, err = m.SetPrivacy(ctx, "s1", "lastseen", "all")
	wantFault(t, err, fault.WhatsAppRefused, "change the privacy setting lastseen", "400")
	_, err = m.SetPrivacy(ctx, "s1", "readreceipts", "contacts")
	wantFault(t, err, fault.WhatsAppRefused, "change the privacy setting readreceipts")

	// Default disappearing timer.
	const day = 24 * time.Hour
	for _, d := range []time.Duration{day, 7 * day, 90 * day, 0} {
		if err := m.SetDefaultDisappearingTimer(ctx, "s1", d); err != nil {
			t.Fatalf("timer %s: %v", d, err)
		}
		if acct, _ := e.net.Account(phone); time.Duration(acct.DisappearingSeconds)*time.Second != d {
			t.Errorf("network timer %d s, want %s", acct.DisappearingSeconds, d)
		}
	}
	wantFault(t, m.SetDefaultDisappearingTimer(ctx, "s1", time.Hour), fault.WhatsAppRefused, "set the default disappearing timer")

	// Not connected: 409 for every operation.
	e.settle(st)
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(id string) error{
		"SetPicture":                  func(id string) error { return m.SetPicture(ctx, id, own, pic) },
		"SetProfileName":              func(id string) error { return m.SetProfileName(ctx, id, "x") },
		"Privacy":                     func(id string) error { return errOf(m.Privacy(ctx, id)) },
		"SetPrivacy":                  func(id string) error { return errOf(m.SetPrivacy(ctx, id, "status", "all")) },
		"SetDefaultDisappearingTimer": func(id string) error { return m.SetDefaultDisappearingTimer(ctx, id, day) },
	}
	for name, op := range ops {
		t.Run(name+" when not connected", func(t *testing.T) {
			wantFault(t, op("s1"), fault.NotConnected, "session s1 is not connected (status: DISCONNECTED)")
			wantFault(t, op("never-loaded"), fault.NotConnected, "session never-loaded is not connected")
		})
	}
}
