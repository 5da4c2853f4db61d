package wafake

import (
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// ChatStateInfo is a chat state a client showed an account: typing
// (composing), recording a voice note, or paused.
type ChatStateInfo struct {
	From  string // the phone of the account that showed it
	State string // composing, recording or paused
	At    time.Time
}

// maxChatStates bounds the chat states an account keeps: the newest win.
const maxChatStates = 256

// ChatStatesFor returns the chat states clients showed account phone,
// oldest first.
func (n *Network) ChatStatesFor(phone string) []ChatStateInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return append([]ChatStateInfo(nil), a.chatStates...)
	}
	return nil
}

// handleChatState takes a client's <chatstate to=…>: its account typing,
// recording or pausing in a direct chat. The account it is shown to keeps
// it (its phone sees it), and its online linked devices get it, as from
// WhatsApp: chat states are not queued for devices that are offline.
func (n *Network) handleChatState(c *conn, node *waBinary.Node) {
	if c.dev == nil {
		return
	}
	to, ok := node.Attrs["to"].(types.JID)
	if !ok || len(node.GetChildren()) == 0 {
		return
	}
	if to.Server == types.HiddenUserServer {
		to = n.pnOfLID(to)
	}
	child := node.GetChildren()[0]
	state := child.Tag
	if state == "composing" && child.AttrGetter().OptionalString("media") == "audio" {
		state = "recording"
	}
	if state != "composing" && state != "paused" && state != "recording" {
		return
	}
	n.mu.Lock()
	from := c.dev.acct
	var a *account
	if to.Server == types.DefaultUserServer {
		a, _ = n.accountLocked(to.User) // every valid number is an account
	}
	if a == nil || a == from || n.blockedLocked(a.phone, from.phone) {
		n.mu.Unlock()
		return
	}
	a.chatStates = append(a.chatStates, ChatStateInfo{From: from.phone, State: state, At: time.Now()})
	if len(a.chatStates) > maxChatStates {
		a.chatStates = append(a.chatStates[:0:0], a.chatStates[len(a.chatStates)-maxChatStates:]...)
	}
	var conns []*conn
	for _, comp := range linkedLocked(a, nil) {
		if comp.loggedIn != nil && comp.loggedIn.live {
			conns = append(conns, comp.loggedIn)
		}
	}
	n.mu.Unlock()
	out := waBinary.Node{Tag: "chatstate", Attrs: waBinary.Attrs{"from": from.jid()}, Content: []waBinary.Node{child}}
	for _, oc := range conns {
		_ = oc.send(out)
	}
}

// relayReceipt passes a receipt a client sent for another account's
// messages on to that account's linked devices, as WhatsApp tells a
// sender's devices: delivered, read and played (read-self is the reader's
// own business, and a retry is answered by whoever sent the message).
// from is the reader's device; owner the messages' sender.
func (n *Network) relayReceipt(c *conn, node *waBinary.Node, chat, owner types.JID, ids []string) {
	typ := node.AttrGetter().OptionalString("type")
	switch typ {
	case "":
		typ = "delivered"
	case "read", "played":
	default:
		return
	}
	attrs := waBinary.Attrs{"id": ids[0], "t": node.AttrGetter().OptionalString("t")}
	if attrs["t"] == "" {
		attrs["t"] = strconv.FormatInt(time.Now().Unix(), 10)
	}
	if chat.Server == types.GroupServer {
		attrs["from"], attrs["participant"] = chat, c.dev.jid().ToNonAD()
	} else {
		attrs["from"] = c.dev.jid()
	}
	out, err := receiptNode(attrs, ids, typ)
	if err != nil {
		return
	}
	n.mu.Lock()
	a := n.accounts[owner.User]
	var comps []*companion
	if a != nil && a != c.dev.acct {
		comps = linkedLocked(a, nil)
	}
	n.mu.Unlock()
	for _, comp := range comps {
		n.queue(comp, ids[0], out)
	}
}
