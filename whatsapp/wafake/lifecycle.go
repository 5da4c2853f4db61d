package wafake

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// streamEndGrace is how long the network waits, after a stanza that ends a
// stream (<stream:error>, <failure>), before it closes the socket itself.
// whatsmeow handles those stanzas on its handler queue but notices a closed
// socket on its read loop: closed at once, it may take the close for an
// unexpected one and reconnect before it has read why (a removed device
// would then log in again and be told 401 twice).
const streamEndGrace = 250 * time.Millisecond

// endStream sends the stanza that ends c's stream and closes c once the
// client has closed it, or after streamEndGrace.
func (n *Network) endStream(c *conn, node waBinary.Node) {
	_ = c.send(node)
	t := time.NewTimer(streamEndGrace)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
	case <-t.C:
	}
	c.close()
}

// afterLogin gives a device that just logged in what it missed, then tells
// it the offline delivery is complete: <ib><offline count/></ib>, whatsmeow's
// events.OfflineSyncCompleted (a gateway's "received pending
// notifications"). It comes after the queued stanzas on the same stream, so
// the client handles them first. When there is something to replay, WhatsApp
// announces it first: <ib><offline_preview/></ib>, events.OfflineSyncPreview.
func (n *Network) afterLogin(c *conn) {
	n.mu.Lock()
	queued, kinds := len(c.dev.unacked), map[string]int{}
	for _, q := range c.dev.unacked {
		kinds[q.node.Tag]++
	}
	n.mu.Unlock()
	if queued > 0 {
		_ = c.send(waBinary.Node{Tag: "ib", Content: []waBinary.Node{{Tag: "offline_preview", Attrs: waBinary.Attrs{
			"count": strconv.Itoa(queued), "message": strconv.Itoa(kinds["message"]), "receipt": strconv.Itoa(kinds["receipt"]),
			"notification": strconv.Itoa(kinds["notification"]), "appdata": "0",
		}}}})
	}
	count := n.flushQueue(c)
	_ = c.send(waBinary.Node{Tag: "ib", Content: []waBinary.Node{
		{Tag: "offline", Attrs: waBinary.Attrs{"count": strconv.Itoa(count)}},
	}})
}

// handleMD answers the client's md IQs: pairing by code, the passkey
// step and logout.
func (n *Network) handleMD(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if content, iqErr, ok := n.handlePasskeyIQ(c, node); ok {
		return content, iqErr
	}
	if reg, ok := node.GetOptionalChildByTag("link_code_companion_reg"); ok {
		return n.handleLinkCode(c, &reg)
	}
	if rm, ok := node.GetOptionalChildByTag("remove-companion-device"); ok {
		return n.handleLogout(c, &rm)
	}
	return nil, nil
}

// handleLogout unlinks the device logged in on c at its own request
// (cli.Logout). The client closes the connection itself once answered.
func (n *Network) handleLogout(c *conn, rm *waBinary.Node) ([]waBinary.Node, *iqError) {
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
	// A companion may only unlink itself; unlinking others is the phone's.
	if jid, _ := rm.Attrs["jid"].(types.JID); jid != c.dev.jid() && jid != c.dev.lidJID() {
		return nil, &iqError{403, "forbidden"}
	}
	n.mu.Lock()
	n.forgetLocked(c.dev)
	n.mu.Unlock()
	return nil, nil
}

// forgetLocked unlinks a companion from its account: it no longer logs in,
// is no longer in device lists, and its queued stanzas are dropped. Device
// numbers are never reused, so the Signal sessions others hold with it are
// simply never used again. n.mu must be held.
func (n *Network) forgetLocked(comp *companion) {
	if comp.acct.devices[comp.device] == comp {
		delete(comp.acct.devices, comp.device)
	}
	comp.unacked = nil
}

// linkedLockedByJID finds the linked device named by a device JID, by phone
// number or LID. n.mu must be held.
func (n *Network) linkedLockedByJID(device types.JID) *companion {
	if device.Device == 0 {
		return nil // the phone itself
	}
	switch device.Server {
	case types.DefaultUserServer:
		return n.companionLocked(device.User, device.Device)
	case types.HiddenUserServer:
		for _, a := range n.accounts {
			if a.lid == device.User {
				return a.devices[device.Device]
			}
		}
	}
	return nil
}

// LinkedDevices lists the devices linked to the account of phone (not the
// phone itself).
func (n *Network) LinkedDevices(phone string) []types.JID {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.accounts[phone]
	if a == nil {
		return nil
	}
	return a.deviceJIDs()[1:]
}

// RemoveDevice is the phone unlinking one of its linked devices. If the
// device is online it gets <stream:error code="401"><conflict
// type="device_removed"/></stream:error> (whatsmeow: events.LoggedOut, store
// deleted); later logins with its keys are refused with <failure
// reason="401"/> (events.LoggedOut{OnConnect: true}).
func (n *Network) RemoveDevice(device types.JID) error {
	n.mu.Lock()
	comp := n.linkedLockedByJID(device)
	if comp == nil {
		n.mu.Unlock()
		return fmt.Errorf("wafake: %s is not a linked device", device)
	}
	n.forgetLocked(comp)
	c := comp.loggedIn
	n.mu.Unlock()
	if c != nil {
		n.endStream(c, waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "401"}, Content: []waBinary.Node{
			{Tag: "conflict", Attrs: waBinary.Attrs{"type": "device_removed"}},
		}})
	}
	return nil
}

// DropConnection closes the socket of a logged-in device abruptly, as a
// network failure would. whatsmeow emits events.Disconnected and reconnects
// by itself.
func (n *Network) DropConnection(device types.JID) error {
	c, err := n.onlineConn(device)
	if err != nil {
		return err
	}
	c.close()
	return nil
}

// StreamError ends the stream of a logged-in device with <stream:error
// code=code/>. With 503 whatsmeow sees the socket close (events.Disconnected)
// and reconnects; with 515 it reconnects at once by itself, without
// events.Disconnected; other codes give events.StreamError, then a
// reconnect. For 401 use RemoveDevice.
func (n *Network) StreamError(device types.JID, code string) error {
	if _, err := strconv.ParseUint(code, 10, 16); err != nil {
		return fmt.Errorf("wafake: stream error code %q is not a number", code)
	}
	if code == "401" {
		return errors.New("wafake: a 401 stream error unlinks the device: use RemoveDevice")
	}
	c, err := n.onlineConn(device)
	if err != nil {
		return err
	}
	n.endStream(c, waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": code}})
	return nil
}

func (n *Network) onlineConn(device types.JID) (*conn, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	comp := n.linkedLockedByJID(device)
	if comp == nil {
		return nil, fmt.Errorf("wafake: %s is not a linked device", device)
	}
	if comp.loggedIn == nil {
		return nil, fmt.Errorf("wafake: %s is not online", device)
	}
	return comp.loggedIn, nil
}
