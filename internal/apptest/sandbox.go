package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// SandboxConfig is Config in sandbox mode, with private URLs allowed so a
// test can serve media from an httptest server on loopback.
func SandboxConfig(t testing.TB) config.Config {
	t.Helper()
	cfg := Config(t)
	cfg.Sandbox = true
	cfg.AllowPrivateURLs = true
	return cfg
}

// StartSandbox runs a server against an in-process simulated network.
func StartSandbox(t testing.TB) *Server {
	t.Helper()
	return Start(t, SandboxConfig(t))
}

// Network is the simulated network of a server started with --sandbox.
func (s *Server) Network(t testing.TB) *wafake.Network {
	t.Helper()
	l := s.App.Sandbox()
	if l == nil {
		t.Fatal("the server is not in sandbox mode")
	}
	return l.Network()
}

// RemoteNetwork runs a simulated network with its control API on loopback,
// as `wagraph sandbox-network` does, for servers started with
// --sandbox-network: it outlives them, so a test can restart a server and
// find its linked devices still linked.
func RemoteNetwork(t testing.TB) (*wafake.Network, string) {
	t.Helper()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatalf("simulated network: %v", err)
	}
	ctl := httptest.NewServer(sandbox.Handler(n, nil))
	t.Cleanup(func() {
		ctl.Close()
		n.Close()
	})
	return n, ctl.Listener.Addr().String()
}

// Session is a session a test created and linked.
type Session struct {
	ID    string
	Phone string
	JID   string // the linked device
}

// LinkSession creates a session with the admin token (named by the server:
// names are unique per user and a test links several), connects it and has
// the simulated phone of phone scan its QR code through the GraphQL
// sandboxLinkDevice control; it returns once the session is CONNECTED.
func (s *Server) LinkSession(t testing.TB, phone string) Session {
	t.Helper()
	return s.LinkSessionAs(t, AdminToken, phone)
}

// LinkSessionAs is LinkSession for the user of token: the session is
// theirs.
func (s *Server) LinkSessionAs(t testing.TB, token, phone string) Session {
	t.Helper()
	sess, err := link(context.Background(), s.Client(), s.URL, token, phone)
	if err != nil {
		t.Fatal(err)
	}
	return s.Track(sess)
}

// link is LinkSessionAs on the server at base, failing no test: the linked
// fixture (linked.go) links before any test runs.
func link(ctx context.Context, hc *http.Client, base, token, phone string) (Session, error) {
	gql := func(query string, vars map[string]any, out any) error {
		return testclient.GraphQL(ctx, hc, base, token, query, vars, out)
	}
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := gql(`mutation { createSession { session { id } } }`, nil, &created); err != nil {
		return Session{}, err
	}
	id := created.CreateSession.Session.ID
	if err := gql(`mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil); err != nil {
		return Session{}, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var out struct {
			Session struct{ Status, QRCode *string }
		}
		if err := gql(`query($id: ID!) { session(id: $id) { status qrCode } }`, map[string]any{"id": id}, &out); err != nil {
			return Session{}, err
		}
		if st := out.Session; st.Status != nil && *st.Status == "PAIRING" && st.QRCode != nil {
			break
		}
		if time.Now().After(deadline) {
			return Session{}, fmt.Errorf("session %s shows no QR code within 30 s", id)
		}
	}
	var linked struct {
		SandboxLinkDevice struct {
			Status string
			Jid    string
		}
	}
	if err := gql(`mutation($id: ID!, $phone: String!) { sandboxLinkDevice(sessionId: $id, phone: $phone) { status jid } }`,
		map[string]any{"id": id, "phone": phone}, &linked); err != nil {
		return Session{}, err
	}
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		return Session{}, fmt.Errorf("linked session %s is %s", id, linked.SandboxLinkDevice.Status)
	}
	return Session{ID: id, Phone: phone, JID: linked.SandboxLinkDevice.Jid}, nil
}

// Track has the server settle a session a test linked by itself before it
// stops.
func (s *Server) Track(sess Session) Session {
	s.mu.Lock()
	s.linked = append(s.linked, sess)
	s.mu.Unlock()
	return sess
}

// WaitStatus polls the session until it is in status and ok (nil: any)
// holds for its GraphQL fields; it fails the test after 20 s.
func (s *Server) WaitStatus(t testing.TB, id, status string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		var out struct{ Session map[string]any }
		s.MustGraphQL(t, AdminToken, `query($id: ID!) { session(id: $id) { id status jid phone pushName qrCode qrImage pairingCode } }`,
			map[string]any{"id": id}, &out)
		last = out.Session
		if last != nil && last["status"] == status && (ok == nil || ok(last)) {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := json.Marshal(last)
	t.Fatalf("session %s did not reach %s: %s", id, status, b)
	return nil
}

// Settle waits until the network holds nothing unacknowledged for the
// session's device and the device has been quiet for a moment: whatsmeow
// races a frame still in flight with its own Disconnect, so a test settles
// a session before the server stops.
func Settle(t testing.TB, n *wafake.Network, sess Session) {
	t.Helper()
	if err := settle(n, sess); err != nil {
		t.Log(err)
	}
}

func settle(n *wafake.Network, sess Session) error {
	dev, err := whatsapp.ParseJID(sess.JID)
	if err != nil {
		return fmt.Errorf("device JID %q: %w", sess.JID, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if n.Unacked(dev) == 0 && n.Idle(dev) > 200*time.Millisecond {
			return nil
		}
		if n.ConnectionCounts()[dev.String()].Open == 0 && n.Idle(dev) > 200*time.Millisecond {
			return nil // offline (a disconnected session): nothing in flight, its queue waits for its next login
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("device %s did not settle (unacked %d)", sess.JID, n.Unacked(dev))
}
