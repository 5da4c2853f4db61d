package wafake

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// What the simulated contacts do to a linked account besides messaging:
// receipts, presence, reactions, calls; and what the network records of the
// receipts and presence linked devices send.

// ErrNoSubscriber is returned by SendPresence for an availability change no
// device of the recipient subscribed to (whatsmeow's SubscribePresence):
// WhatsApp only sends presence to subscribers.
var ErrNoSubscriber = errors.New("wafake: no linked device subscribed to this presence")

// ReceiptInfo is a receipt a linked device sent about a message of another
// account, as that account's phone saw it.
type ReceiptInfo struct {
	From       types.JID // the device that sent the receipt
	Chat       types.JID // the reader's user JID, or the group
	MessageIDs []string
	// Type is as whatsmeow names it: "" (delivered), "inactive" (delivered
	// while not online), "read", "read-self" (read with read receipts off:
	// not shown to the sender by WhatsApp), "played", "sender", …
	Type      types.ReceiptType
	Timestamp time.Time
}

// ReceiptsFor returns the receipts linked devices sent about messages of
// account phone, oldest first.
func (n *Network) ReceiptsFor(phone string) []ReceiptInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return slices.Clone(a.state.receipts)
	}
	return nil
}

// recordReceipt keeps a receipt a client sent for the account whose message
// it is about: the chat in a 1:1 chat, the participant in a group.
func (n *Network) recordReceipt(c *conn, node *waBinary.Node) {
	if c.dev == nil {
		return
	}
	ag := node.AttrGetter()
	to, ok := node.Attrs["to"].(types.JID)
	if !ok {
		return
	}
	chat, owner := c.dev.jid().ToNonAD(), to
	if to.Server == types.GroupServer {
		chat = to
		if owner, ok = node.Attrs["participant"].(types.JID); !ok {
			return
		}
	}
	if owner.Server == types.HiddenUserServer {
		owner = n.pnOfLID(owner)
	}
	ids := []string{ag.String("id")}
	if list, ok := node.GetOptionalChildByTag("list"); ok {
		for _, item := range list.GetChildrenByTag("item") {
			ids = append(ids, item.AttrGetter().String("id"))
		}
	}
	r := ReceiptInfo{
		From: c.dev.jid(), Chat: chat, MessageIDs: ids,
		Type: types.ReceiptType(ag.OptionalString("type")), Timestamp: time.Now(),
	}
	if t := ag.OptionalString("t"); t != "" {
		if sec, err := strconv.ParseInt(t, 10, 64); err == nil {
			r.Timestamp = time.Unix(sec, 0)
		}
	}
	n.mu.Lock()
	if a := n.accounts[owner.User]; a != nil && a != c.dev.acct {
		a.state.receipts = append(a.state.receipts, r)
	}
	n.mu.Unlock()
	n.relayReceipt(c, node, chat, owner, ids)
}

// targetsLocked returns the linked devices of to (a user JID: all of them; a
// device JID: that one) and an error when from may not reach them. n.mu
// must be held.
func (n *Network) targetsLocked(from string, to types.JID) ([]*companion, error) {
	if _, err := n.accountLocked(from); err != nil {
		return nil, err
	}
	if to.Server != types.DefaultUserServer {
		return nil, fmt.Errorf("wafake: %s is not a user of s.whatsapp.net", to)
	}
	a, err := n.accountLocked(to.User)
	if err != nil {
		return nil, err
	}
	if n.blockedLocked(to.User, from) {
		return nil, fmt.Errorf("wafake: %s has blocked %s", to.User, from)
	}
	var out []*companion
	for _, comp := range linkedLocked(a, nil) {
		if to.Device == 0 || comp.device == to.Device {
			out = append(out, comp)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("wafake: %s has no such linked device", to)
	}
	return out, nil
}

// SendReceipt has the phone of account from send a receipt ("delivered",
// "read" or "played") for messages of to, which its linked devices emit as
// events.Receipt. to is the account (every linked device) or one device.
func (n *Network) SendReceipt(from string, to types.JID, messageIDs []string, typ string) error {
	if len(messageIDs) == 0 {
		return errors.New("wafake: a receipt names at least one message")
	}
	attrs := waBinary.Attrs{
		"id": messageIDs[0], "from": types.NewJID(from, types.DefaultUserServer),
		"t": strconv.FormatInt(time.Now().Unix(), 10),
	}
	node, err := receiptNode(attrs, messageIDs, typ)
	if err != nil {
		return err
	}
	n.mu.Lock()
	comps, err := n.targetsLocked(from, to)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	// The client acks a receipt with the first message id; queued under it,
	// a receipt reaches a device that was offline when it logs in.
	for _, comp := range comps {
		n.queue(comp, messageIDs[0], node)
	}
	return nil
}

// SendGroupReceipt has the phone of member from send a receipt
// ("delivered", "read" or "played") for messages account to sent in group,
// as WhatsApp relays a member's receipt to the sender: from the group, with
// the member as participant (whatsmeow: events.Receipt with IsGroup). to is
// the account (every linked device) or one device.
func (n *Network) SendGroupReceipt(from string, group types.JID, to types.JID, messageIDs []string, typ string) error {
	if len(messageIDs) == 0 {
		return errors.New("wafake: a receipt names at least one message")
	}
	node, err := receiptNode(waBinary.Attrs{
		"id": messageIDs[0], "from": group, "participant": pnJID(from),
		"t": strconv.FormatInt(time.Now().Unix(), 10),
	}, messageIDs, typ)
	if err != nil {
		return err
	}
	n.mu.Lock()
	g := n.groups.byID[group.User]
	var comps []*companion
	switch {
	case g == nil || group.Server != types.GroupServer:
		err = fmt.Errorf("wafake: no group %s", group)
	case g.role(from) == "":
		err = fmt.Errorf("wafake: %s is not a member of %s", from, group)
	case g.role(to.User) == "":
		err = fmt.Errorf("wafake: %s is not a member of %s", to.User, group)
	default:
		comps, err = n.targetsLocked(from, to)
	}
	n.mu.Unlock()
	if err != nil {
		return err
	}
	for _, comp := range comps {
		n.queue(comp, messageIDs[0], node)
	}
	return nil
}

// receiptNode is a <receipt> with attrs, of type typ, for messageIDs: the
// first is the receipt's id, the others are listed.
func receiptNode(attrs waBinary.Attrs, messageIDs []string, typ string) (waBinary.Node, error) {
	switch typ {
	case "delivered": // whatsmeow's ReceiptTypeDelivered is no type at all
	case "read", "played":
		attrs["type"] = typ
	default:
		return waBinary.Node{}, &ValueError{What: "a receipt type", Value: typ}
	}
	node := waBinary.Node{Tag: "receipt", Attrs: attrs}
	if len(messageIDs) > 1 {
		items := make([]waBinary.Node, len(messageIDs)-1)
		for i, id := range messageIDs[1:] {
			items[i] = waBinary.Node{Tag: "item", Attrs: waBinary.Attrs{"id": id}}
		}
		node.Content = []waBinary.Node{{Tag: "list", Content: items}}
	}
	return node, nil
}

// SendPresence has account from show a presence to to: "available" and
// "unavailable" reach the devices of to that subscribed to from on their
// current connection (else ErrNoSubscriber); "composing", "recording" and
// "paused" reach every online linked device of to (events.ChatPresence).
func (n *Network) SendPresence(from string, to types.JID, state string) error {
	n.mu.Lock()
	comps, err := n.targetsLocked(from, to)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var conns []*conn
	for _, comp := range comps {
		if comp.loggedIn != nil {
			conns = append(conns, comp.loggedIn)
		}
	}
	var node waBinary.Node
	switch state {
	case "available", "unavailable":
		sender, _ := n.accountLocked(from)
		p := &presenceState{available: state == "available", last: time.Now()}
		sender.state.presence = p
		node = presenceNode(sender, p)
		subscribed := conns[:0]
		for _, c := range conns {
			if c.dev.acct.state.subs[c][from] {
				subscribed = append(subscribed, c)
			}
		}
		conns = subscribed
	case "composing", "paused", "recording":
		child := waBinary.Node{Tag: state}
		if state == "recording" {
			child = waBinary.Node{Tag: "composing", Attrs: waBinary.Attrs{"media": "audio"}}
		}
		node = waBinary.Node{Tag: "chatstate", Attrs: waBinary.Attrs{"from": types.NewJID(from, types.DefaultUserServer)}, Content: []waBinary.Node{child}}
	default:
		n.mu.Unlock()
		return &ValueError{What: "a presence state", Value: state}
	}
	n.mu.Unlock()
	if len(conns) == 0 {
		if node.Tag == "presence" {
			return fmt.Errorf("%w: %s of %s", ErrNoSubscriber, from, to)
		}
		return fmt.Errorf("wafake: no linked device of %s is online", to)
	}
	for _, c := range conns {
		_ = c.send(node)
	}
	return nil
}

// presenceNode is the <presence> a subscriber gets; "last" follows the
// account's last-seen privacy. n.mu must be held.
func presenceNode(a *account, p *presenceState) waBinary.Node {
	attrs := waBinary.Attrs{"from": a.jid()}
	if !p.available {
		attrs["type"] = "unavailable"
		if a.state.privacyOf(types.PrivacySettingTypeLastSeen) == types.PrivacySettingNone {
			attrs["last"] = "deny"
		} else {
			attrs["last"] = strconv.FormatInt(p.last.Unix(), 10)
		}
	}
	return waBinary.Node{Tag: "presence", Attrs: attrs}
}

// handlePresence takes a client's presence stanza: a subscription to another
// account (answered at once with that account's presence, if it has shown
// one), or its own availability, which carries its push name and reaches the
// network's other clients that subscribed to the account.
func (n *Network) handlePresence(c *conn, node *waBinary.Node) {
	if c.dev == nil {
		return
	}
	ag := node.AttrGetter()
	typ := ag.OptionalString("type")
	switch typ {
	case "subscribe", "unsubscribe":
		to, ok := node.Attrs["to"].(types.JID)
		if !ok {
			return
		}
		if to.Server == types.HiddenUserServer {
			to = n.pnOfLID(to)
		}
		n.mu.Lock()
		s := &c.dev.acct.state
		if typ == "unsubscribe" {
			delete(s.subs[c], to.User)
			n.mu.Unlock()
			return
		}
		if s.subs == nil {
			s.subs = map[*conn]map[string]bool{}
		}
		for old := range s.subs {
			if old.ctx.Err() != nil {
				delete(s.subs, old)
			}
		}
		if s.subs[c] == nil {
			s.subs[c] = map[string]bool{}
		}
		s.subs[c][to.User] = true
		var current *waBinary.Node
		if a := n.accounts[to.User]; a != nil && a.state.presence != nil && !n.blockedLocked(c.dev.acct.phone, to.User) {
			p := presenceNode(a, a.state.presence)
			current = &p
		}
		n.mu.Unlock()
		if current != nil {
			_ = c.send(*current)
		}
	case "available", "unavailable":
		n.mu.Lock()
		a := c.dev.acct
		if name := ag.OptionalString("name"); name != "" {
			a.state.pushName = name
		}
		p := &presenceState{available: typ == "available", last: time.Now()}
		a.state.presence = p
		out := presenceNode(a, p)
		var subscribers []*conn
		for _, o := range n.accounts {
			for sc, users := range o.state.subs {
				if sc != c && users[a.phone] && sc.ctx.Err() == nil && !slices.Contains(a.state.blocked, o.jid()) {
					subscribers = append(subscribers, sc)
				}
			}
		}
		n.mu.Unlock()
		for _, sc := range subscribers {
			_ = sc.send(out)
		}
	}
}

// SendReaction has the phone of account from react with emoji (empty
// removes the reaction) to message messageID of the chat with to; the
// linked devices of to emit events.Message with a ReactionMessage. The
// message is taken as one to sent, unless from's phone never received it
// (then from sent it itself).
func (n *Network) SendReaction(from, to, messageID, emoji string) (string, error) {
	n.mu.Lock()
	if n.blockedLocked(to, from) {
		n.mu.Unlock()
		return "", fmt.Errorf("wafake: %s has blocked %s", to, from)
	}
	fromMe := true
	if a := n.accounts[from]; a != nil {
		for _, r := range a.inbox {
			if r.ID == messageID {
				fromMe = false
				break
			}
		}
	}
	n.mu.Unlock()
	return n.SendMessage(from, to, &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{
		Key: &waCommon.MessageKey{
			RemoteJID: proto.String(types.NewJID(to, types.DefaultUserServer).String()),
			FromMe:    proto.Bool(fromMe),
			ID:        proto.String(messageID),
		},
		Text:              proto.String(emoji),
		SenderTimestampMS: proto.Int64(time.Now().UnixMilli()),
	}})
}

// CallOffer has account from call to: every linked device of to (or the one
// device named) gets the offer and emits events.CallOffer. Devices that are
// offline get it when they log in, as from WhatsApp's offline queue. It
// returns the call id.
func (n *Network) CallOffer(from string, to types.JID) (string, error) {
	n.mu.Lock()
	comps, err := n.targetsLocked(from, to)
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	callID := strings.ToUpper(hex.EncodeToString(b))
	caller := types.NewJID(from, types.DefaultUserServer)
	id := n.nextID()
	node := waBinary.Node{
		Tag: "call",
		Attrs: waBinary.Attrs{
			"id": id, "from": caller, "t": strconv.FormatInt(time.Now().Unix(), 10),
			"platform": "android", "version": "2.25.1.75", "notify": "Contact " + from,
		},
		Content: []waBinary.Node{{
			Tag:   "offer",
			Attrs: waBinary.Attrs{"call-id": callID, "call-creator": caller},
			Content: []waBinary.Node{
				{Tag: "audio", Attrs: waBinary.Attrs{"enc": "opus", "rate": "16000"}},
				{Tag: "audio", Attrs: waBinary.Attrs{"enc": "opus", "rate": "8000"}},
				{Tag: "net", Attrs: waBinary.Attrs{"medium": "3"}},
			},
		}},
	}
	for _, comp := range comps {
		n.queue(comp, id, node)
	}
	return callID, nil
}
