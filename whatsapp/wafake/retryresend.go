package wafake

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/session"
	"go.mau.fi/libsignal/util/optional"
	waBinary "go.mau.fi/whatsmeow/binary"
)

// What a phone of the network does with a retry receipt, as WhatsApp's
// phones (and whatsmeow as a sender, retry.go handleRetryReceipt) do: a
// linked device that could not decrypt a message asks its sender for it
// again; the sender encrypts the same plaintext for that device anew —
// from a fresh Signal session when the receipt carries the device's keys
// — and sends it with the same id and the retry count on <enc count>,
// which whatsmeow reports as events.Message.RetryCount. The re-sent
// stanza takes the place of the queued one: only an ack or a delivery
// receipt takes it off the queue.

const (
	// retryLimit is whatsmeow's: it sends no retry receipt at a count of
	// 5 (retry.go sendRetryReceipt), so a phone answers counts below it,
	// and no more than retryLimit-1 times per message and device.
	retryLimit = 5
	// sentLimit bounds what a device's record keeps of the messages phones
	// sent it: whatsmeow's sender keeps its last 256 (recentMessagesSize).
	sentLimit = 256
	// recreateAfter is how long a phone waits before it builds another
	// session with a device that asks again without its keys (whatsmeow:
	// recreateSessionTimeout).
	recreateAfter = time.Hour
)

// sentMessage is what a phone keeps of a message it sent a linked device,
// to send it again: the plaintext and the stanza as first sent.
type sentMessage struct {
	id      string
	sender  *account
	plain   []byte          // the marshalled waE2E.Message, unpadded
	attrs   waBinary.Attrs  // of <message>; the phone's own copy
	enc     waBinary.Attrs  // extra attributes of <enc> (mediatype)
	extra   []waBinary.Node // what follows the <enc> (verified_name)
	resends int             // answered retry receipts
}

// sentLog is a device's record of what phones sent it, oldest first, at
// most sentLimit messages; a delivery receipt drops a message from it.
type sentLog struct {
	msgs []sentMessage
	// recreated is when each phone (by number) last built a new session
	// with the device for a retry receipt without keys.
	recreated map[string]time.Time
	// relayed is what other clients sent the device, oldest first, at
	// most sentLimit copies: whom to hand its retry receipts (retryrelay.go).
	relayed []relayedCopy
	// corrupt counts the next copies from clients to spoil
	// (CorruptNextCopies).
	corrupt int
}

// rememberSent keeps m for a retry of it by comp; it must be called
// before the stanza is queued, as the device may ask at once.
func (n *Network) rememberSent(comp *companion, m sentMessage) {
	m.attrs = maps.Clone(m.attrs) // a group's stanzas share theirs
	n.mu.Lock()
	defer n.mu.Unlock()
	l := &comp.sent
	l.msgs = slices.DeleteFunc(l.msgs, func(s sentMessage) bool { return s.id == m.id })
	if over := len(l.msgs) + 1 - sentLimit; over > 0 {
		l.msgs = slices.Delete(l.msgs, 0, over)
	}
	l.msgs = append(l.msgs, m)
}

// forgetSent drops messages the device has received (a delivery, read or
// played receipt): the phone will not be asked for them again.
func (n *Network) forgetSent(c *conn, ids []string) {
	if c.dev == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	c.dev.sent.msgs = slices.DeleteFunc(c.dev.sent.msgs, func(s sentMessage) bool { return slices.Contains(ids, s.id) })
	c.dev.sent.relayed = slices.DeleteFunc(c.dev.sent.relayed, func(r relayedCopy) bool { return slices.Contains(ids, r.id) })
}

// acknowledgeCopy takes a client's <ack> of a message: it removes the
// stanza from the device's queue unless the ack is owed for an earlier copy
// the device could not decrypt. whatsmeow acks such a copy next to its
// retry receipt, in either order (in the same goroutine with
// SynchronousAck, receipt first); arriving after the re-send was queued,
// that ack would otherwise drop a copy the device has not yet read.
func (n *Network) acknowledgeCopy(c *conn, id string) {
	if c.dev == nil {
		return
	}
	n.mu.Lock()
	i := slices.IndexFunc(c.dev.unacked, func(q queued) bool { return q.id == id && q.acksOwed > 0 })
	if i >= 0 {
		c.dev.unacked[i].acksOwed--
	}
	n.mu.Unlock()
	if i < 0 {
		n.acknowledge(c, id)
	}
}

// retryRequest is what a retry receipt asks.
type retryRequest struct {
	id     string
	count  int
	bundle *prekey.Bundle // the device's keys, when the receipt has them
}

// parseRetryReceipt reads a retry receipt of the device numbered device:
// <receipt type="retry" id><retry count id t v/><registration/>[<keys>
// <type/><identity/><key><id/><value/></key><skey><id/><value/><signature/>
// </skey><device-identity/></keys>]</receipt> (whatsmeow retry.go
// sendRetryReceipt).
func parseRetryReceipt(node *waBinary.Node, device uint16) (retryRequest, error) {
	retry, ok := node.GetOptionalChildByTag("retry")
	if !ok {
		return retryRequest{}, errors.New("retry receipt: no <retry> element")
	}
	ag := retry.AttrGetter()
	r := retryRequest{id: ag.OptionalString("id"), count: ag.OptionalInt("count")}
	if r.id == "" {
		r.id = node.AttrGetter().OptionalString("id")
	}
	if r.id == "" {
		return r, errors.New("retry receipt: <retry id> is missing")
	}
	if !ag.OK() || r.count < 1 {
		return r, fmt.Errorf("retry receipt: <retry count> must be a whole number from 1, got %v", retry.Attrs["count"])
	}
	keys, ok := node.GetOptionalChildByTag("keys")
	if !ok {
		return r, nil
	}
	reg, err := fixedBytes(node, "registration", 4)
	if err != nil {
		return r, err
	}
	idKey, err := fixedBytes(&keys, "identity", 32)
	if err != nil {
		return r, err
	}
	skey, ok := keys.GetOptionalChildByTag("skey")
	if !ok {
		return r, errors.New("retry receipt: <keys> has no <skey>")
	}
	skID, skPub, err := readKeyNode(&skey)
	if err != nil {
		return r, err
	}
	sig, err := fixedBytes(&skey, "signature", 64)
	if err != nil {
		return r, err
	}
	regID, ik := binary.BigEndian.Uint32(reg), identity.NewKey(ecc.NewDjbECPublicKey([32]byte(idKey)))
	signed := ecc.NewDjbECPublicKey(skPub)
	if key, ok := keys.GetOptionalChildByTag("key"); ok {
		pkID, pkPub, err := readKeyNode(&key)
		if err != nil {
			return r, err
		}
		r.bundle = prekey.NewBundle(regID, uint32(device), optional.NewOptionalUint32(pkID), skID,
			ecc.NewDjbECPublicKey(pkPub), signed, [64]byte(sig), ik)
	} else {
		r.bundle = prekey.NewBundle(regID, uint32(device), optional.NewEmptyUint32(), skID, nil, signed, [64]byte(sig), ik)
	}
	return r, nil
}

// readKeyNode reads a <key> or <skey>: a 3-byte id and a 32-byte public key.
func readKeyNode(node *waBinary.Node) (uint32, [32]byte, error) {
	id, err := fixedBytes(node, "id", 3)
	if err != nil {
		return 0, [32]byte{}, err
	}
	pub, err := fixedBytes(node, "value", 32)
	if err != nil {
		return 0, [32]byte{}, err
	}
	return uint32(id[0])<<16 | uint32(binary.BigEndian.Uint16(id[1:])), [32]byte(pub), nil
}

// fixedBytes returns the content of parent's child tag, which must be
// size bytes.
func fixedBytes(parent *waBinary.Node, tag string, size int) ([]byte, error) {
	child, ok := parent.GetOptionalChildByTag(tag)
	if !ok {
		return nil, fmt.Errorf("retry receipt: <%s> has no <%s>", parent.Tag, tag)
	}
	b, _ := child.Content.([]byte)
	if len(b) != size {
		return nil, fmt.Errorf("retry receipt: <%s><%s> must be %d bytes, got %d", parent.Tag, tag, size, len(b))
	}
	return b, nil
}

// answerRetry has the phone that sent the message a retry receipt of c's
// device names send it again, encrypted anew for that device, with the
// receipt's count. A receipt for a message another client sent is handed
// to that client (relayRetry). Messages the device has already received,
// or that fell out of sentLimit, are not answered, nor counts from
// retryLimit on.
func (n *Network) answerRetry(c *conn, node *waBinary.Node) {
	comp := c.dev
	if comp == nil {
		return
	}
	r, err := parseRetryReceipt(node, comp.device)
	if err != nil {
		n.log.Debug("wafake: retry receipt not answered", "device", comp.jid().String(), "err", err)
		return
	}
	n.mu.Lock()
	i := slices.IndexFunc(comp.sent.msgs, func(s sentMessage) bool { return s.id == r.id })
	if i < 0 {
		n.mu.Unlock()
		n.relayRetry(c, node, r)
		return
	}
	if r.count >= retryLimit || comp.sent.msgs[i].resends >= retryLimit-1 {
		n.mu.Unlock()
		n.log.Debug("wafake: retries exhausted", "device", comp.jid().String(), "id", r.id, "count", r.count)
		return
	}
	comp.sent.msgs[i].resends++
	m := comp.sent.msgs[i]
	bundle := r.bundle
	fromUploads := bundle == nil && r.count >= 2 && time.Since(comp.sent.recreated[m.sender.phone]) > recreateAfter
	if fromUploads {
		if comp.sent.recreated == nil {
			comp.sent.recreated = map[string]time.Time{}
		}
		comp.sent.recreated[m.sender.phone] = time.Now()
	}
	n.mu.Unlock()

	if fromUploads {
		// Asked twice without keys: the session may be what is broken;
		// whatsmeow's sender then starts another from fetched prekeys.
		if bundle, err = n.companionBundle(comp); err != nil {
			n.log.Warn("wafake: retry: no prekeys", "device", comp.jid().String(), "err", err)
			return
		}
	}
	enc, err := n.phoneReencrypt(m.sender, comp, m.plain, bundle)
	if err != nil {
		n.log.Warn("wafake: retry: re-encrypt", "device", comp.jid().String(), "id", r.id, "err", err)
		return
	}
	maps.Copy(enc.Attrs, m.enc)
	enc.Attrs["count"] = strconv.Itoa(r.count)
	n.requeue(comp, r.id, waBinary.Node{Tag: "message", Attrs: m.attrs, Content: append([]waBinary.Node{enc}, m.extra...)})
}

// phoneReencrypt is phoneEncrypt from a new session built from bundle,
// when there is one (it replaces the phone's session with the device).
func (n *Network) phoneReencrypt(sender *account, comp *companion, plain []byte, bundle *prekey.Bundle) (waBinary.Node, error) {
	if bundle != nil {
		addr := comp.jid().SignalAddress()
		builder := session.NewBuilderFromSignal(sender.phoneDev, addr, serializer)
		if err := builder.ProcessBundle(context.Background(), bundle); err != nil {
			return waBinary.Node{}, fmt.Errorf("wafake: new session with %s: %w", comp.jid(), err)
		}
	}
	return n.phoneEncrypt(sender, comp, plain)
}

// requeue is queue for a re-sent message: it takes the place of the
// queued copy with the same id (one stanza per id, at the end of the
// queue, as WhatsApp delivers the new copy after what came meanwhile),
// which inherits the acks owed for earlier copies. A copy still queued
// when its retry receipt came was not acknowledged, and whatsmeow acks
// each copy it cannot decrypt: one more ack is owed.
func (n *Network) requeue(comp *companion, id string, node waBinary.Node) {
	n.mu.Lock()
	owed := 0
	if i := slices.IndexFunc(comp.unacked, func(q queued) bool { return q.id == id && q.node.Tag == "message" }); i >= 0 {
		owed = comp.unacked[i].acksOwed + 1
		comp.unacked = slices.Delete(comp.unacked, i, i+1)
	}
	n.enqueueLocked(comp, id, node)
	comp.unacked[len(comp.unacked)-1].acksOwed = owed
	c := comp.loggedIn
	if c != nil && !c.live {
		c = nil // flushQueue sends it, as in queue
	}
	n.mu.Unlock()
	if c != nil {
		_ = c.send(node)
	}
}

// encExtra is what a re-sent <enc> keeps of the first one: the attributes
// other than those the new encryption sets.
func encExtra(enc waBinary.Node) waBinary.Attrs {
	extra := maps.Clone(enc.Attrs)
	delete(extra, "v")
	delete(extra, "type")
	return extra
}
