package wafake

import (
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// ResetFailureReason and ResetFailureMessage make the <failure> the network
// answers the login of a device it has no record of: one linked before its
// state was deleted, or to a network that kept none (a restarted one
// without Options.StateDir). WhatsApp has no such case — its servers do not
// forget — so the code is one whatsmeow passes on as events.ConnectFailure
// with the message, and the session manager (package whatsapp) tells the
// user the simulated network was reset, not that a phone logged the
// device out (401).
const (
	ResetFailureReason  = 415
	ResetFailureMessage = "simulated network reset"
)

// login answers a client that presented a paired device: <success> when the
// network knows the device and its noise key, <failure reason=401> (logged
// out) for a device it removed or whose key changed, the reset failure for
// one it never knew. A second connection of the same device replaces the
// first.
func (n *Network) login(c *conn) bool {
	phone := strconv.FormatUint(c.payload.GetUsername(), 10)
	device := uint16(c.payload.GetDevice())
	n.mu.Lock()
	comp := n.companionLocked(phone, device)
	if comp == nil || comp.noisePub != c.noisePub {
		// Device numbers are never reused: one at or past the account's
		// next was never linked here.
		a := n.accounts[phone]
		unknown := a == nil || device >= a.nextDev
		n.mu.Unlock()
		failure := waBinary.Attrs{"reason": "401"}
		if unknown {
			failure = waBinary.Attrs{"reason": strconv.Itoa(ResetFailureReason), "message": ResetFailureMessage}
		}
		n.endStream(c, waBinary.Node{Tag: "failure", Attrs: failure})
		return false
	}
	old := comp.loggedIn
	comp.loggedIn, c.dev = c, comp
	n.counts.loginLocked(comp.jid().String(), old != nil)
	n.mu.Unlock()
	if old != nil {
		// As every stream end: give the old client the reason before the
		// close, or it reconnects and kicks the new one off.
		n.endStream(old, waBinary.Node{Tag: "stream:error", Content: []waBinary.Node{{Tag: "conflict", Attrs: waBinary.Attrs{"type": "replaced"}}}})
	}
	if err := c.send(waBinary.Node{Tag: "success", Attrs: waBinary.Attrs{
		"t":   strconv.FormatInt(time.Now().Unix(), 10),
		"lid": comp.lidJID(),
	}}); err != nil {
		return false
	}
	if err := n.enqueueKeyShare(comp); err != nil {
		n.log.Warn("wafake: app state key share", "device", comp.jid().String(), "err", err)
	}
	return true
}
