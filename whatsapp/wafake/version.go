package wafake

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/store"
)

// WhatsApp refuses clients whose announced version is too old: the login
// (or registration) is answered <failure reason="405"/>, "client outdated",
// and WhatsApp Web's own page names the current version, which is where
// clients learn a newer one (whatsmeow's GetLatestVersion reads its
// "client_revision"). The network does the same once a minimum is set.

// versionGate is the minimum client version, under its own lock.
type versionGate struct {
	mu      sync.Mutex
	minimum store.WAVersionContainer // zero: every version is welcome
}

// RequireClientVersion makes the network refuse, from now on, logins and
// registrations of clients announcing a version below minimum (405, as
// WhatsApp does), drops the connected clients that are below it, and
// advertises minimum as the current version on its web page. A zero
// minimum lifts the requirement.
func (n *Network) RequireClientVersion(minimum store.WAVersionContainer) {
	n.version.mu.Lock()
	n.version.minimum = minimum
	n.version.mu.Unlock()
	n.mu.Lock()
	var outdated []*conn
	for c := range n.conns {
		// c.dev is set under n.mu after the payload was read: the
		// logged-in clients. One still pairing meets the 405 at the
		// login that follows its pairing.
		if c.dev != nil && n.outdated(c.payload) {
			outdated = append(outdated, c)
		}
	}
	n.mu.Unlock()
	for _, c := range outdated {
		// As WhatsApp ends the stream of a client it no longer takes:
		// the client reconnects and meets the 405.
		go c.close()
	}
}

// CurrentVersion is the version the network's web page advertises: the
// minimum it requires, or else whatsmeow's own.
func (n *Network) CurrentVersion() store.WAVersionContainer {
	n.version.mu.Lock()
	defer n.version.mu.Unlock()
	if !n.version.minimum.IsZero() {
		return n.version.minimum
	}
	return store.GetWAVersion()
}

// outdated reports whether p announces a version below the minimum.
func (n *Network) outdated(p *waWa6.ClientPayload) bool {
	n.version.mu.Lock()
	minimum := n.version.minimum
	n.version.mu.Unlock()
	if minimum.IsZero() {
		return false
	}
	v := p.GetUserAgent().GetAppVersion()
	return store.WAVersionContainer{v.GetPrimary(), v.GetSecondary(), v.GetTertiary()}.LessThan(minimum)
}

// refuseOutdated ends the stream of a client below the minimum version
// with WhatsApp's 405, before it logs in or pairs.
func (n *Network) refuseOutdated(c *conn) bool {
	if !n.outdated(c.payload) {
		return false
	}
	n.endStream(c, waBinary.Node{Tag: "failure", Attrs: waBinary.Attrs{"reason": "405"}})
	return true
}

// serveWebPage is WhatsApp Web's page as far as version checks read it.
func (n *Network) serveWebPage(w http.ResponseWriter, _ *http.Request) {
	v := n.CurrentVersion()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>WhatsApp</title><script>self.__SERVER_DATA={\"client_revision\":%s,\"version\":%q};</script></head><body></body></html>\n",
		strconv.FormatUint(uint64(v[2]), 10), v.String())
}
