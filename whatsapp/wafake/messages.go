package wafake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/session"
	"go.mau.fi/libsignal/util/optional"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// Received is a message as a simulated phone decrypted it.
type Received struct {
	ID   string
	From types.JID // the sending device, by phone number
	Chat types.JID // the sender's user JID, or the group
	// To is the chat as the sender addressed it: the group, or for a direct
	// message the recipient's LID (whatsmeow sends direct messages to LIDs
	// since "send: always use LID for DMs") or its phone JID where a client
	// still uses it.
	To        types.JID
	Message   *waE2E.Message
	Timestamp time.Time
}

// Inbox returns every message the phone of account phone received, oldest
// first.
func (n *Network) Inbox(phone string) []Received {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return append([]Received(nil), a.inbox...)
	}
	return nil
}

// handleMessage takes a message a client sent: every copy addressed to a
// simulated phone is decrypted into that phone's inbox, every copy for a
// linked device is passed on; the sender gets its ack. A direct message
// names its recipient and devices by LID (or by phone number), its own
// devices likewise; both resolve to the same accounts.
func (n *Network) handleMessage(c *conn, node *waBinary.Node) {
	ag := node.AttrGetter()
	id, to := ag.String("id"), ag.JID("to")
	if c.dev == nil {
		return
	}
	if to.Server == types.GroupServer {
		n.handleGroupMessage(c, node)
		return
	}
	ack := waBinary.Node{Tag: "ack", Attrs: waBinary.Attrs{
		"class": "message", "id": id, "from": to, "t": strconv.FormatInt(time.Now().Unix(), 10),
	}}
	if !n.isUser(to) {
		// WhatsApp refuses a message to a user it does not have, by
		// number or by LID: whatsmeow turns the ack's error into
		// ErrServerReturnedError.
		ack.Attrs["error"] = "404"
		_ = c.send(ack)
		return
	}
	if ag.OptionalString("category") == "peer" && to.User == c.dev.acct.phone && to.Device == 0 {
		// A device writing to its own phone (history requests).
		n.handlePeerMessage(c, node, ack)
		return
	}
	if n.reachoutRefuses(c.dev.acct, to) {
		// The account is under a reach-out timelock and to is new to it
		// (reachout.go): WhatsApp refuses the message, relays nothing.
		ack.Attrs["error"] = errReachout
		_ = c.send(ack)
		return
	}
	sender := c.dev.jid()
	for _, p := range node.GetChildrenByTag("participants") {
		for _, t := range p.GetChildrenByTag("to") {
			dest, ok := t.Attrs["jid"].(types.JID)
			if !ok {
				continue
			}
			for _, enc := range t.GetChildrenByTag("enc") {
				n.deliverCopy(sender, to, dest, id, enc, node)
			}
		}
	}
	if to.Device != 0 {
		// One device's copy, as a sender answers a retry receipt
		// (whatsmeow retry.go handleRetryReceipt): <message to=<device>>
		// with its <enc> inside.
		for _, enc := range node.GetChildrenByTag("enc") {
			n.deliverCopy(sender, to.ToNonAD(), to, id, enc, node)
		}
	}
	_ = c.send(ack)
}

// reachoutRefuses tells whether the reach-out timelock of from refuses a
// direct message to the user to (by number or LID); one it lets through
// makes the two known to each other.
func (n *Network) reachoutRefuses(from *account, to types.JID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	recipient := n.accounts[to.User]
	if to.Server == types.HiddenUserServer {
		recipient = n.accountOfLIDLocked(to.User)
	}
	if n.reachoutRefusesLocked(from, recipient) {
		return true
	}
	contactedLocked(from, recipient)
	return false
}

// isUser reports whether to, a user's JID by number or by LID, names an
// account of the network. Every valid number is one (accountLocked); a LID
// is one only when an account was given it.
func (n *Network) isUser(to types.JID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if to.Server == types.HiddenUserServer {
		return n.accountOfLIDLocked(to.User) != nil
	}
	_, err := n.accountLocked(to.User)
	return err == nil
}

// deliverCopy hands one encrypted copy to its device: a phone decrypts
// it into its inbox; a linked device gets it relayed (relayCopy). orig is
// the stanza the sender sent.
func (n *Network) deliverCopy(sender, chat, dest types.JID, id string, enc waBinary.Node, orig *waBinary.Node) {
	if dest.Server == types.HiddenUserServer {
		dest = n.pnOfLID(dest)
	}
	n.mu.Lock()
	acct := n.accounts[dest.User]
	n.mu.Unlock()
	if acct == nil {
		return
	}
	if dest.Device != 0 {
		n.relayCopy(sender, chat, acct, dest.Device, id, enc, orig)
		return
	}
	msg, err := n.phoneDecrypt(acct, sender, enc)
	if err != nil {
		n.log.Warn("wafake: phone could not decrypt", "to", dest.String(), "from", sender.String(), "err", err)
		return
	}
	chatJID := sender.ToNonAD()
	if chat.Server == types.GroupServer {
		chatJID = chat
	}
	peer := chat.ToNonAD() // whom a copy of the account's own send went to
	if peer.Server == types.HiddenUserServer {
		peer = n.pnOfLID(peer)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// A phone keeps one message of an id from one sender: a send made
	// again with its id (a retry after a crash) is the same message.
	for _, r := range acct.inbox {
		if r.ID == id && r.From.User == sender.User {
			return
		}
	}
	now := time.Now()
	acct.inbox = append(acct.inbox, Received{ID: id, From: sender, Chat: chatJID, To: chat, Message: msg, Timestamp: now})
	if chat.Server != types.GroupServer && historyWorthy(msg) {
		// The phone's history of the chat: a message of one of its own
		// devices is its own, in the chat it was sent to.
		if sender.User == acct.phone {
			keepHistoryLocked(acct, peer, historyEntry(id, true, msg, now))
		} else {
			keepHistoryLocked(acct, chatJID, historyEntry(id, false, msg, now))
		}
	}
}

// relayCopy passes a copy one client encrypted for a linked device of acct
// on to that device, as WhatsApp's server does: the ciphertext untouched,
// the sender named by number and by LID, the sending device's identity
// (which a prekey message carries) kept. A copy for another device of the
// sender's own account names the chat it was sent to (recipient), as
// WhatsApp's copies of one's own sends do. The device gets it when it is
// online, or at its next login.
func (n *Network) relayCopy(sender, chat types.JID, acct *account, device uint16, id string, enc waBinary.Node, orig *waBinary.Node) {
	n.mu.Lock()
	comp := acct.devices[device]
	from := n.accounts[sender.User]
	if comp == nil || from == nil {
		n.mu.Unlock()
		return
	}
	notify, _ := n.senderIdentityLocked(from)
	senderLID := types.JID{User: from.lid, Device: sender.Device, Server: types.HiddenUserServer}
	n.mu.Unlock()
	attrs := waBinary.Attrs{
		"id": id, "from": sender, "sender_lid": senderLID, "notify": notify,
		"t": strconv.FormatInt(time.Now().Unix(), 10), "type": orig.AttrGetter().OptionalString("type"),
	}
	if from == acct {
		attrs["recipient"] = chat
	}
	n.mu.Lock()
	enc = spoilLocked(comp, enc)
	n.mu.Unlock()
	content := []waBinary.Node{enc}
	if di, ok := orig.GetOptionalChildByTag("device-identity"); ok {
		content = append(content, di)
	}
	msg := waBinary.Node{Tag: "message", Attrs: attrs, Content: content}
	if from != acct {
		n.rememberRelayed(comp, relayedCopy{id: id, from: sender, to: chat.ToNonAD()})
	}
	if _, retried := enc.Attrs["count"]; retried {
		// An answer to a retry receipt takes the place of the copy
		// still queued, as a phone's does (retryresend.go requeue).
		n.requeue(comp, id, msg)
		return
	}
	n.queue(comp, id, msg)
}

// pnOfLID maps a LID device JID to the phone-number JID of the same device.
func (n *Network) pnOfLID(j types.JID) types.JID {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accountOfLIDLocked(j.User); a != nil {
		return types.JID{User: a.phone, Device: j.Device, Server: types.DefaultUserServer}
	}
	return j
}

// accountOfLIDLocked is the account given LID lid, or nil. n.mu must be
// held.
func (n *Network) accountOfLIDLocked(lid string) *account {
	for _, a := range n.accounts {
		if a.lid == lid {
			return a
		}
	}
	return nil
}

// phoneDecrypt decrypts a 1:1 copy as the phone of acct.
func (n *Network) phoneDecrypt(acct *account, sender types.JID, enc waBinary.Node) (*waE2E.Message, error) {
	ct, ok := enc.Content.([]byte)
	if !ok {
		return nil, errors.New("enc without bytes")
	}
	ctx := context.Background()
	addr := sender.SignalAddress()
	builder := session.NewBuilderFromSignal(acct.phoneDev, addr, serializer)
	cipher := session.NewCipher(builder, addr)
	var plain []byte
	var err error
	switch enc.AttrGetter().String("type") {
	case "pkmsg":
		var m *protocol.PreKeySignalMessage
		if m, err = protocol.NewPreKeySignalMessageFromBytes(ct, serializer.PreKeySignalMessage, serializer.SignalMessage); err == nil {
			plain, err = cipher.DecryptMessage(ctx, m)
		}
	case "msg":
		var m *protocol.SignalMessage
		if m, err = protocol.NewSignalMessageFromBytes(ct, serializer.SignalMessage); err == nil {
			plain, err = cipher.Decrypt(ctx, m)
		}
	default:
		return nil, fmt.Errorf("enc type %q", enc.AttrGetter().String("type"))
	}
	if err != nil {
		return nil, err
	}
	msg, err := unpadMessage(plain)
	if err != nil {
		return nil, err
	}
	if dsm := msg.GetDeviceSentMessage(); dsm != nil && dsm.GetMessage() != nil {
		return dsm.GetMessage(), nil
	}
	return msg, nil
}

// unpadMessage strips whatsmeow's random padding (n bytes of value n) from a
// decrypted payload and reads the message.
func unpadMessage(plain []byte) (*waE2E.Message, error) {
	if len(plain) == 0 || int(plain[len(plain)-1]) > len(plain) {
		return nil, errors.New("bad padding")
	}
	plain = plain[:len(plain)-int(plain[len(plain)-1])]
	var msg waE2E.Message
	if err := proto.Unmarshal(plain, &msg); err != nil {
		return nil, fmt.Errorf("unmarshal message: %w", err)
	}
	return &msg, nil
}

// SendText has the phone of account from send text to every linked device of
// account to; it returns the message id.
func (n *Network) SendText(from, to, text string) (string, error) {
	return n.SendMessage(from, to, &waE2E.Message{Conversation: proto.String(text)})
}

// SendMessage has the phone of account from send msg to every linked device
// of account to. Devices that are offline get it when they log in.
func (n *Network) SendMessage(from, to string, msg *waE2E.Message) (string, error) {
	return n.sendMessage(from, to, msg, true, time.Time{})
}

// sendMessage is SendMessage; withSecrets gives a text or media message
// the secret phones give it (secrets.go). The stanza's time is at, or now
// when at is zero.
func (n *Network) sendMessage(from, to string, msg *waE2E.Message, withSecrets bool, at time.Time) (string, error) {
	if at.IsZero() {
		at = time.Now()
	}
	n.mu.Lock()
	sender, err := n.accountLocked(from)
	if err != nil {
		n.mu.Unlock()
		return "", err
	}
	id := newMessageID()
	if withSecrets && carriesSecret(msg) {
		msg = withSecret(msg, sender.messageSecret(id))
	}
	plain, err := proto.Marshal(msg)
	if err != nil {
		n.mu.Unlock()
		return "", err
	}
	recipient, err := n.accountLocked(to)
	if err != nil {
		n.mu.Unlock()
		return "", err
	}
	var comps []*companion
	for _, j := range recipient.deviceJIDs()[1:] {
		comps = append(comps, recipient.devices[j.Device])
	}
	contactedLocked(sender, recipient)
	if len(comps) == 0 {
		n.mu.Unlock()
		return "", fmt.Errorf("wafake: account %s has no linked device", to)
	}
	recordDirectLocked(sender, recipient, id, msg, at)
	notify, identity := n.senderIdentityLocked(sender)
	n.mu.Unlock()
	for _, comp := range comps {
		enc, err := n.phoneEncrypt(sender, comp, plain)
		if err != nil {
			return "", err
		}
		if mt := encMediaType(msg); mt != "" {
			enc.Attrs["mediatype"] = mt
		}
		// sender_lid gives the sender's LID with its number, as WhatsApp
		// does: the client keeps the Signal session under the LID, the one
		// it encrypts to when it writes back (a session under the number
		// would later be migrated over the LID's, message.go decryptMessages).
		node := waBinary.Node{Tag: "message", Attrs: waBinary.Attrs{
			"id": id, "from": sender.jid(), "sender_lid": types.NewJID(sender.lid, types.HiddenUserServer), "type": messageType(msg),
			"t": strconv.FormatInt(at.Unix(), 10), "notify": notify,
		}, Content: append([]waBinary.Node{enc}, identity...)}
		n.rememberSent(comp, sentMessage{id: id, sender: sender, plain: plain, attrs: node.Attrs, enc: encExtra(enc), extra: identity})
		n.queue(comp, id, node)
	}
	return id, nil
}

func messageType(msg *waE2E.Message) string {
	switch {
	case msg.GetReactionMessage() != nil:
		return "reaction"
	case msg.GetConversation() != "" || msg.GetExtendedTextMessage() != nil || msg.GetProtocolMessage() != nil ||
		msg.GetSecretEncryptedMessage() != nil:
		return "text"
	default:
		return "media"
	}
}

func newMessageID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "3EB0" + strings.ToUpper(hex.EncodeToString(b))
}

// phoneEncrypt encrypts plain from the phone of sender to a linked device,
// starting a session from the device's uploaded prekeys when there is none.
func (n *Network) phoneEncrypt(sender *account, comp *companion, plain []byte) (waBinary.Node, error) {
	ctx := context.Background()
	addr := comp.jid().SignalAddress()
	builder := session.NewBuilderFromSignal(sender.phoneDev, addr, serializer)
	if has, _ := sender.phoneDev.ContainsSession(ctx, addr); !has {
		b, err := n.companionBundle(comp)
		if err != nil {
			return waBinary.Node{}, err
		}
		if err := builder.ProcessBundle(ctx, b); err != nil {
			return waBinary.Node{}, fmt.Errorf("wafake: start session with %s: %w", comp.jid(), err)
		}
	}
	cipher := session.NewCipher(builder, addr)
	pad := byte(1 + time.Now().UnixNano()%15)
	padded := append(append([]byte{}, plain...), make([]byte, pad)...)
	for i := len(plain); i < len(padded); i++ {
		padded[i] = pad
	}
	ct, err := cipher.Encrypt(ctx, padded)
	if err != nil {
		return waBinary.Node{}, fmt.Errorf("wafake: encrypt for %s: %w", comp.jid(), err)
	}
	typ := "msg"
	if ct.Type() == protocol.PREKEY_TYPE {
		typ = "pkmsg"
	}
	return waBinary.Node{Tag: "enc", Attrs: waBinary.Attrs{"v": "2", "type": typ}, Content: ct.Serialize()}, nil
}

// companionBundle builds a prekey bundle of a linked device from what it
// uploaded; the one-time prekey is used up.
func (n *Network) companionBundle(comp *companion) (*prekey.Bundle, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var (
		pkID  uint32
		pkPub [32]byte
		found bool
	)
	for id, pub := range comp.prekeys {
		if !found || id < pkID {
			pkID, pkPub, found = id, pub, true
		}
	}
	sk := comp.signed
	idKey := identity.NewKey(ecc.NewDjbECPublicKey(comp.identity))
	if !found {
		return prekey.NewBundle(comp.regID, uint32(comp.device), optional.NewEmptyUint32(), sk.id,
			nil, ecc.NewDjbECPublicKey(sk.pub), sk.sig, idKey), nil
	}
	delete(comp.prekeys, pkID)
	return prekey.NewBundle(comp.regID, uint32(comp.device), optional.NewOptionalUint32(pkID), sk.id,
		ecc.NewDjbECPublicKey(pkPub), ecc.NewDjbECPublicKey(sk.pub), sk.sig, idKey), nil
}

// queue sends a stanza to a linked device now if it is online, and keeps it
// until the device acknowledges it.
func (n *Network) queue(comp *companion, id string, node waBinary.Node) {
	n.mu.Lock()
	n.enqueueLocked(comp, id, node)
	c := comp.loggedIn
	if c != nil && !c.live {
		// The device is logging in: its replay (flushQueue) sends this
		// after everything queued before it, as WhatsApp's offline queue
		// keeps order. Sent now, it could overtake those, or come twice.
		c = nil
	}
	n.mu.Unlock()
	if c != nil {
		_ = c.send(node)
	}
}

// enqueueLocked appends a stanza to the device's queue of unacknowledged
// ones. n.mu must be held.
func (n *Network) enqueueLocked(comp *companion, id string, node waBinary.Node) {
	comp.queued++
	comp.unacked = append(comp.unacked, queued{id: id, node: node, seq: comp.queued})
}

// flushQueue sends a device that just logged in on c everything it has not
// acknowledged, in order, including what is queued while it runs; then
// queue sends to c directly. It returns how many stanzas it sent.
func (n *Network) flushQueue(c *conn) int {
	var sent int
	var last uint64 // the seq of the last stanza sent
	for {
		n.mu.Lock()
		var batch []queued
		for _, q := range c.dev.unacked {
			if q.seq > last {
				batch = append(batch, q)
			}
		}
		if len(batch) == 0 || c.dev.loggedIn != c {
			c.live = true
			n.mu.Unlock()
			return sent
		}
		n.mu.Unlock()
		for _, q := range batch {
			if err := c.send(q.node); err != nil {
				return sent // the connection is gone; the next login replays the rest
			}
			last = q.seq
			sent++
		}
	}
}

// handleAck removes an acknowledged stanza from the device's queue.
func (n *Network) handleAck(c *conn, node *waBinary.Node) {
	n.acknowledgeCopy(c, node.AttrGetter().OptionalString("id"))
}

// handleReceipt takes a client's receipt. For a message, the delivery
// receipt is what acknowledges it (whatsmeow sends it only once its handlers
// succeeded); the network answers every receipt with an ack. A retry
// receipt says the device could not read the message: as at WhatsApp, it
// does not take the message off the device's queue (only an ack or a
// delivery receipt does), so a device that leaves it unacknowledged gets it
// again at its next login; the phone that sent it sends it again
// (retryresend.go).
func (n *Network) handleReceipt(c *conn, node *waBinary.Node) {
	ag := node.AttrGetter()
	id := ag.String("id")
	ids := []string{id}
	if list, ok := node.GetOptionalChildByTag("list"); ok {
		for _, item := range list.GetChildrenByTag("item") {
			ids = append(ids, item.AttrGetter().String("id"))
		}
	}
	if node.Attrs["type"] != "retry" {
		n.acknowledge(c, ids...)
		n.forgetSent(c, ids)
	} else {
		// Before the receipt is recorded: once ReceiptsFor shows it, the
		// re-sent copy, if any, is queued and on its way.
		n.answerRetry(c, node)
	}
	// A media retry request is answered by a notification (mediaretry.go),
	// queued under the message id: after the acknowledgement above, which
	// would otherwise drop it.
	n.answerMediaRetry(c, node)
	n.recordReceipt(c, node)
	attrs := waBinary.Attrs{"class": "receipt", "id": id, "from": node.Attrs["to"]}
	if typ, ok := node.Attrs["type"]; ok {
		attrs["type"] = typ
	}
	_ = c.send(waBinary.Node{Tag: "ack", Attrs: attrs})
}

func (n *Network) acknowledge(c *conn, ids ...string) {
	if c.dev == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	q := c.dev.unacked[:0]
	for _, e := range c.dev.unacked {
		if !slices.Contains(ids, e.id) {
			q = append(q, e)
		}
	}
	c.dev.unacked = q
}
