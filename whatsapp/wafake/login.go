package wafake

import (
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// login answers a client that presented a paired device: <success> when the
// network knows the device and its noise key, <failure reason=401> (logged
// out) otherwise. A second connection of the same device replaces the first.
func (n *Network) login(c *conn) bool {
	phone := strconv.FormatUint(c.payload.GetUsername(), 10)
	n.mu.Lock()
	comp := n.companionLocked(phone, uint16(c.payload.GetDevice()))
	if comp == nil || comp.noisePub != c.noisePub {
		n.mu.Unlock()
		n.endStream(c, waBinary.Node{Tag: "failure", Attrs: waBinary.Attrs{"reason": "401"}})
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
