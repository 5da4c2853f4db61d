package e2e

import (
	"context"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/proxytest"
)

// everySession is a ProxySource that gives every session one proxy: the
// per-session settings' stand-in.
type everySession string

func (p everySession) Proxy(context.Context, string) (string, error) { return string(p), nil }

// TestSessionProxy: the server's Proxies option reaches its sessions. The
// linked session, restored with a SOCKS5 proxy set, logs in through it,
// the proxy asked for the simulated network's address, and an image sent
// through the API is uploaded through it too.
func TestSessionProxy(t *testing.T) {
	t.Parallel()
	const pass = "e2e-s0cks-pw"
	socks := proxytest.SOCKS5(t, "alice", pass)
	s, sess := apptest.StartLinkedWith(t, func(_ *config.Config, o *app.Options) {
		o.Proxies = everySession(socks.URL("alice", pass))
	})
	tunnels, _ := socks.Seen()
	if tunnels == 0 {
		t.Fatal("the session logged in without its proxy")
	}
	for _, target := range socks.Targets() {
		if target != s.Network(t).Addr() {
			t.Errorf("the proxy was asked for %s, want the simulated network's %s", target, s.Network(t).Addr())
		}
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
