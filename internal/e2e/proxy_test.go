package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/proxytest"
)

// TestSessionProxy (issue 32, must-show 3): a proxy set in the session's
// settings is used from its next connect. The linked session, disconnected
// and connected again, logs in through a real SOCKS5 server, which is
// asked for the simulated network's address, and an image sent through
// the API is uploaded through it too; the settings never show the
// password. That another session's connection does not go through it is
// whatsapp's TestProxyPerSession.
func TestSessionProxy(t *testing.T) {
	t.Parallel()
	const pass = "e2e-s0cks-pw"
	socks := proxytest.SOCKS5(t, "alice", pass)
	s, sess := apptest.StartLinked(t)

	put := s.REST(t, "PUT", "/session/"+sess.ID+"/settings", apptest.AdminToken, `{"proxy":"`+socks.URL("alice", pass)+`"}`)
	if put.Status != http.StatusOK || strings.Contains(string(put.Body), pass) {
		t.Fatalf("PUT settings: %d %s", put.Status, put.Body)
	}
	if tunnels, _ := socks.Seen(); tunnels != 0 {
		t.Fatalf("%d tunnels before the next connect: a live connection is not cut by a change", tunnels)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { id } }`, map[string]any{"id": sess.ID}, nil)
	if r := s.REST(t, "POST", "/session/"+sess.ID+"/connect", apptest.AdminToken, ""); r.Status != http.StatusOK {
		t.Fatalf("POST connect: %d %s", r.Status, r.Body)
	}
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)
	tunnels, _ := socks.Seen()
	if tunnels == 0 {
		t.Fatal("the session logged in without its proxy")
	}
	for _, target := range socks.Targets() {
		if target != s.Network(t).Addr() {
			t.Errorf("the proxy was asked for %s, want the simulated network's %s", target, s.Network(t).Addr())
		}
	}
	if got := s.REST(t, "GET", "/session/"+sess.ID+"/settings", apptest.AdminToken, ""); got.Status != http.StatusOK ||
		strings.Contains(string(got.Body), pass) || !strings.Contains(string(got.Body), "socks5://") {
		t.Errorf("GET settings: %d %s; want the proxy shown without its password", got.Status, got.Body)
	}

	const to = "4915550420001"
	_, before := socks.Seen()
	id := restSend(t, s, sess.ID, "image", map[string]any{"number": to, "source": b64(noisyJPEG(t, 128)), "caption": "durch den Proxy"})
	m := received(t, s, to, id)
	_, after := socks.Seen()
	if m.MediaSize == nil || after-before < int64(*m.MediaSize) {
		t.Errorf("the proxy carried %d bytes during the send of an image of %v bytes: its upload went around it", after-before, m.MediaSize)
	}
}
