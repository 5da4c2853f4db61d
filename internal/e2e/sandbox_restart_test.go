package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// textBothWays sends a text from the session to contact and one from
// contact to the session, and checks each arrives decrypted.
func textBothWays(t *testing.T, s *apptest.Server, sess apptest.Session, contact, tag string) {
	t.Helper()
	id := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "out " + tag})
	if m := received(t, s, contact, id); str(m.Text) != "out "+tag {
		t.Errorf("the contact decrypted %q, want %q", str(m.Text), "out "+tag)
	}
	var sent struct{ SandboxSendText string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $t: String!) { sandboxSendText(sessionId: $s, from: $f, text: $t) }`,
		map[string]any{"s": sess.ID, "f": contact, "t": "in " + tag}, &sent)
	if m := waitStored(t, s, sess.ID, sent.SandboxSendText); m.Status != "received" || str(m.Text) != "in "+tag {
		t.Errorf("the session stored %+v, want the text %q received", m, "in "+tag)
	}
}

// TestSandboxSurvivesRestart: `wagraph serve --sandbox` keeps its
// simulated network in the data directory, so a session linked before a
// restart is CONNECTED after it, as the same device and without linking
// again, and texts go both ways.
func TestSandboxSurvivesRestart(t *testing.T) {
	t.Parallel()
	const phone, contact = "4915550007001", "4915550007002"
	cfg := apptest.SandboxConfig(t)
	first := apptest.StartLive(t, cfg)
	sess := first.LinkSession(t, phone)
	textBothWays(t, first, sess, contact, "before")
	first.Stop(t)

	second := apptest.StartLive(t, cfg)
	st := second.WaitStatus(t, sess.ID, "CONNECTED", nil)
	second.Track(sess)
	if st["jid"] != sess.JID {
		t.Errorf("connected as %v after the restart, want the linked device %s", st["jid"], sess.JID)
	}
	if devs := second.Network(t).LinkedDevices(phone); len(devs) != 1 || devs[0].String() != sess.JID {
		t.Errorf("the network's linked devices of %s: %v, want only %s", phone, devs, sess.JID)
	}
	textBothWays(t, second, sess, contact, "after")
}

// TestSandboxResetSaysLinkAgain: a session whose simulated network lost
// its state ends LOGGED_OUT with a reason that says so, not WhatsApp's
// "logged out from another device"; it can be linked again.
func TestSandboxResetSaysLinkAgain(t *testing.T) {
	t.Parallel()
	const phone = "4915550007003"
	cfg := apptest.SandboxConfig(t)
	first := apptest.StartLive(t, cfg)
	sess := first.LinkSession(t, phone)
	first.Stop(t)
	if err := os.RemoveAll(filepath.Join(cfg.DataDir, sandbox.StateDirName)); err != nil {
		t.Fatal(err)
	}

	second := apptest.StartLive(t, cfg)
	second.WaitStatus(t, sess.ID, "LOGGED_OUT", nil)
	var out struct {
		Session struct {
			StatusReason *string
			Jid          *string
		}
	}
	second.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { statusReason jid } }`, map[string]any{"id": sess.ID}, &out)
	if got := str(out.Session.StatusReason); got != whatsapp.NetworkResetReason {
		t.Errorf("statusReason %q, want %q", got, whatsapp.NetworkResetReason)
	}
	if out.Session.Jid != nil {
		t.Errorf("a reset session still names device %s", *out.Session.Jid)
	}
	// Linking again makes a new device of the same account.
	second.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": sess.ID}, nil)
	second.WaitStatus(t, sess.ID, "PAIRING", func(st map[string]any) bool { return st["qrCode"] != nil })
	var linked struct{ SandboxLinkDevice struct{ Status, Jid string } }
	second.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { status jid } }`,
		map[string]any{"id": sess.ID, "p": phone}, &linked)
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		t.Fatalf("linked again: %+v", linked.SandboxLinkDevice)
	}
	second.Track(apptest.Session{ID: sess.ID, Phone: phone, JID: linked.SandboxLinkDevice.Jid})
}

// TestStatusReasonSurvivesRestart: a session's reason is saved with its
// status: a pairing the shutdown stopped is DISCONNECTED after the restart
// and says why, by itself and in the list of sessions, over GraphQL and
// REST. Before the reason was saved it came back null (issue 30).
func TestStatusReasonSurvivesRestart(t *testing.T) {
	t.Parallel()
	cfg := apptest.SandboxConfig(t)
	first := apptest.StartLive(t, cfg)
	id := first.CreateSession(t, "pairing")
	first.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil)
	first.WaitStatus(t, id, "PAIRING", func(st map[string]any) bool { return st["qrCode"] != nil })
	first.Stop(t)

	second := apptest.StartLive(t, cfg)
	type state struct {
		ID, Status   string
		StatusReason *string
	}
	var out struct {
		Session  state
		Sessions []state
	}
	second.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { id status statusReason } sessions { id status statusReason } }`,
		map[string]any{"id": id}, &out)
	var rest struct{ Data state }
	second.REST(t, "GET", "/session/"+id, apptest.AdminToken, "").JSON(t, &rest)
	for _, got := range []struct {
		where string
		st    []state
	}{{"session", []state{out.Session}}, {"sessions", out.Sessions}, {"REST", []state{rest.Data}}} {
		if len(got.st) != 1 || got.st[0].ID != id || got.st[0].Status != "DISCONNECTED" || str(got.st[0].StatusReason) != whatsapp.RestartedReason {
			t.Errorf("%s after the restart: %+v, want %s DISCONNECTED with the reason %q", got.where, got.st, id, whatsapp.RestartedReason)
		}
	}
}
