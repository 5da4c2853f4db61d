package wafake

import (
	"crypto/rand"
	"slices"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Retry receipts between two clients, as WhatsApp's server passes them: a
// linked device that cannot decrypt a copy another client sent it asks
// that client (retryresend.go answers for the network's own phones). The
// server does not read the receipt: it hands it on, its <retry>,
// <registration> and <keys> untouched, to the device that sent the
// message, from the asking device as the sender addressed it (by LID when
// the message went to a LID). The sender answers, if it still has the
// message (whatsmeow: its recent messages in memory, or its retry store
// with UseRetryMessageStore), with a <message to=<device>> carrying one
// <enc count> for that device, which the server relays like any copy.

// relayedCopy is what a device's record keeps of a copy another client
// sent it: who to hand a retry receipt of it to.
type relayedCopy struct {
	id   string
	from types.JID // the sending device, by phone number
	to   types.JID // the recipient as the sender addressed it (LID or number)
}

// rememberRelayed keeps rc for a retry receipt of comp, at most sentLimit
// of them, as rememberSent does for the phones' messages.
func (n *Network) rememberRelayed(comp *companion, rc relayedCopy) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := &comp.sent
	l.relayed = slices.DeleteFunc(l.relayed, func(r relayedCopy) bool { return r.id == rc.id })
	if over := len(l.relayed) + 1 - sentLimit; over > 0 {
		l.relayed = slices.Delete(l.relayed, 0, over)
	}
	l.relayed = append(l.relayed, rc)
}

// relayedSenderLocked finds the device that sent comp message id: in the
// record, or — the record is not kept across a restart of the network —
// in the copy still queued for comp (the sender by number, addressed by
// LID as whatsmeow addresses direct messages). n.mu must be held.
func (n *Network) relayedSenderLocked(comp *companion, id string) (relayedCopy, bool) {
	if i := slices.IndexFunc(comp.sent.relayed, func(r relayedCopy) bool { return r.id == id }); i >= 0 {
		return comp.sent.relayed[i], true
	}
	for _, q := range comp.unacked {
		if q.id != id || q.node.Tag != "message" {
			continue
		}
		from, ok := q.node.Attrs["from"].(types.JID)
		if !ok || from.Server != types.DefaultUserServer || from.Device == 0 {
			return relayedCopy{}, false // a phone's, or a group's
		}
		return relayedCopy{id: id, from: from, to: types.JID{User: comp.acct.lid, Server: types.HiddenUserServer}}, true
	}
	return relayedCopy{}, false
}

// relayRetry hands the retry receipt r of c's device to the client device
// that sent the message; nothing when no client did (or that device is
// gone).
func (n *Network) relayRetry(c *conn, node *waBinary.Node, r retryRequest) {
	comp := c.dev
	n.mu.Lock()
	rc, ok := n.relayedSenderLocked(comp, r.id)
	var target *companion
	if ok {
		if a := n.accounts[rc.from.User]; a != nil {
			target = a.devices[rc.from.Device]
		}
	}
	from := comp.jid()
	if rc.to.Server == types.HiddenUserServer {
		from = types.JID{User: comp.acct.lid, Device: comp.device, Server: types.HiddenUserServer}
	}
	n.mu.Unlock()
	if target == nil {
		n.log.Debug("wafake: retry receipt for a message no client sent", "device", comp.jid().String(), "id", r.id)
		return
	}
	t := node.AttrGetter().OptionalString("t")
	if t == "" {
		t = strconv.FormatInt(time.Now().Unix(), 10)
	}
	n.queue(target, r.id, waBinary.Node{
		Tag:     "receipt",
		Attrs:   waBinary.Attrs{"id": r.id, "from": from, "type": "retry", "t": t},
		Content: node.GetChildren(),
	})
}

// CorruptNextCopies has the next count copies other clients send device
// (a linked device) arrive with a ciphertext it cannot decrypt, as a copy
// spoilt on its way: the device asks the sender for the message again.
func (n *Network) CorruptNextCopies(device types.JID, count int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[device.User]; a != nil {
		if comp := a.devices[device.Device]; comp != nil && device.Device != 0 {
			comp.sent.corrupt += count
		}
	}
}

// spoilLocked returns enc, or a copy of it with a ciphertext nobody can
// decrypt when comp's next copies are to be corrupted. n.mu must be held.
func spoilLocked(comp *companion, enc waBinary.Node) waBinary.Node {
	if comp.sent.corrupt == 0 {
		return enc
	}
	comp.sent.corrupt--
	garbage := make([]byte, 48)
	_, _ = rand.Read(garbage)
	spoilt := waBinary.Node{Tag: enc.Tag, Attrs: waBinary.Attrs{}, Content: garbage}
	for k, v := range enc.Attrs {
		spoilt.Attrs[k] = v
	}
	spoilt.Attrs["type"] = "msg"
	return spoilt
}
