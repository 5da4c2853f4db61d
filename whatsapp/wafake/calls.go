package wafake

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// CallStages are the call signalling stanzas Call sends, as WhatsApp names
// them (the child of <call>): whatsmeow's events.CallOffer, CallOfferNotice,
// CallAccept, CallPreAccept, CallTransport, CallTerminate, CallReject and
// CallRelayLatency.
var CallStages = []string{"offer", "offer_notice", "accept", "preaccept", "transport", "terminate", "reject", "relaylatency"}

// CallStanza is one stanza of a call a simulated phone signals to a linked
// device.
type CallStanza struct {
	Stage  string    // one of CallStages
	CallID string    // the call; "" starts a new one (an offer)
	Video  bool      // offer, offer_notice: a video call
	Group  types.JID // a group call's group; empty for a 1:1 call
	Reason string    // terminate: why the call ended (WhatsApp says e.g. "timeout")
	// Creator is the phone of the account that started the call; "" is
	// the account sending the stanza.
	Creator string
}

// Call has the phone of account from send a call stanza to to: every linked
// device of to (or the one device named) gets it, now or, if offline, when
// it logs in, as from WhatsApp's offline queue. It returns the call id.
func (n *Network) Call(from string, to types.JID, s CallStanza) (string, error) {
	if !slices.Contains(CallStages, s.Stage) {
		return "", &ValueError{What: "a call stage", Value: s.Stage}
	}
	n.mu.Lock()
	comps, err := n.targetsLocked(from, to)
	var creator *account
	if err == nil {
		creator, err = n.accountLocked(cmp.Or(s.Creator, from))
	}
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	callID := s.CallID
	if callID == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		callID = strings.ToUpper(hex.EncodeToString(b))
	}
	// Calls name the creator by LID with its number alongside, as WhatsApp
	// does since it moved calls to LIDs.
	attrs := waBinary.Attrs{
		"call-id": callID, "call-creator": types.NewJID(creator.lid, types.HiddenUserServer), "caller_pn": creator.jid(),
	}
	if !s.Group.IsEmpty() {
		attrs["group-jid"] = s.Group
	}
	var content []waBinary.Node
	switch s.Stage {
	case "offer":
		content = []waBinary.Node{
			{Tag: "audio", Attrs: waBinary.Attrs{"enc": "opus", "rate": "16000"}},
			{Tag: "net", Attrs: waBinary.Attrs{"medium": "3"}},
		}
		if s.Video {
			content = append(content, waBinary.Node{Tag: "video", Attrs: waBinary.Attrs{"enc": "vp8", "dec": "vp8"}})
		}
	case "offer_notice":
		attrs["media"] = "audio"
		if s.Video {
			attrs["media"] = "video"
		}
		if !s.Group.IsEmpty() {
			attrs["type"] = "group"
		}
	case "terminate":
		if s.Reason != "" {
			attrs["reason"] = s.Reason
		}
	}
	id := n.nextID()
	node := waBinary.Node{
		Tag: "call",
		Attrs: waBinary.Attrs{
			"id": id, "from": types.NewJID(from, types.DefaultUserServer), "t": strconv.FormatInt(time.Now().Unix(), 10),
			"platform": "android", "version": "2.25.1.75", "notify": "Contact " + from,
		},
		Content: []waBinary.Node{{Tag: s.Stage, Attrs: attrs, Content: content}},
	}
	if s.Stage == "offer" && creator.phone == from {
		n.mu.Lock()
		creator.state.lastCall, creator.state.lastCallRejected = callID, false
		n.mu.Unlock()
	}
	for _, comp := range comps {
		n.queue(comp, id, node)
	}
	return callID, nil
}

// handleCall takes a call stanza a client sends: a <reject> of a call
// (whatsmeow's RejectCall) tells its creator the call was declined. The
// network acks it as WhatsApp does.
func (n *Network) handleCall(c *conn, node *waBinary.Node) {
	if c.dev == nil {
		return
	}
	for _, child := range node.GetChildren() {
		if child.Tag != "reject" {
			continue
		}
		ag := child.AttrGetter()
		callID, creator := ag.OptionalString("call-id"), ag.OptionalJIDOrEmpty("call-creator")
		if creator.Server == types.HiddenUserServer {
			creator = n.pnOfLID(creator)
		}
		n.mu.Lock()
		if a := n.accounts[creator.User]; a != nil && a.state.lastCall == callID {
			a.state.lastCallRejected = true
		}
		n.mu.Unlock()
	}
	_ = c.send(waBinary.Node{Tag: "ack", Attrs: waBinary.Attrs{"class": "call", "id": node.AttrGetter().OptionalString("id")}})
}
