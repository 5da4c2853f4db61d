package whatsapp

// Calls: the signalling stanzas of a call that WhatsApp relays to the
// linked device become call events. The device cannot take part in a call;
// a receiver learns that one rang and how it ended.

import (
	"context"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// KindCall is a call's signalling: {id, from, status, isVideo, isGroup, …}.
const KindCall = "call"

// callStanza is what one of whatsmeow's call events says, whatever its type.
type callStanza struct {
	meta   types.BasicCallMeta
	status string
	video  *bool
	group  bool
	reason string
}

// callOf reads one of whatsmeow's call events; ok is false for any other
// event.
func callOf(raw any) (c callStanza, ok bool) {
	switch evt := raw.(type) {
	case *events.CallOffer:
		c = callStanza{meta: evt.BasicCallMeta, status: "offer", video: hasVideo(evt.Data)}
	case *events.CallOfferNotice:
		c = callStanza{meta: evt.BasicCallMeta, status: "offer_notice", group: evt.Type == "group"}
		switch evt.Media {
		case "video", "audio":
			v := evt.Media == "video"
			c.video = &v
		}
	case *events.CallAccept:
		c = callStanza{meta: evt.BasicCallMeta, status: "accept"}
	case *events.CallPreAccept:
		c = callStanza{meta: evt.BasicCallMeta, status: "preaccept"}
	case *events.CallTransport:
		c = callStanza{meta: evt.BasicCallMeta, status: "transport"}
	case *events.CallTerminate:
		c = callStanza{meta: evt.BasicCallMeta, status: "terminate", reason: evt.Reason}
	case *events.CallReject:
		c = callStanza{meta: evt.BasicCallMeta, status: "reject"}
	case *events.CallRelayLatency:
		c = callStanza{meta: evt.BasicCallMeta, status: "relaylatency"}
	default:
		return c, false
	}
	c.group = c.group || !c.meta.GroupJID.IsEmpty()
	return c, true
}

// hasVideo tells a video offer (it offers a <video> stream) from a voice
// one.
func hasVideo(offer *waBinary.Node) *bool {
	if offer == nil {
		return nil
	}
	_, v := offer.GetOptionalChildByTag("video")
	return &v
}

// handleCall publishes a call stanza. whatsmeow acknowledges call stanzas
// whatever the handler returns (call.go: its deferred ack ignores the
// handler's status), so a call event that could not be stored is lost: the
// false returned here is for the log and the tests.
func (r *clientRun) handleCall(raw any) bool {
	c, ok := callOf(raw)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	addrs := []types.JID{c.meta.From}
	// When the sender is the call's creator (an offer; a caller hanging
	// up), the creator's two addresses (LID and number) are the sender's.
	if u := c.meta.From.User; c.meta.CallCreator.User == u || c.meta.CallCreatorAlt.User == u {
		addrs = append(addrs, c.meta.CallCreator, c.meta.CallCreatorAlt)
	}
	from := personOf(ctx, r.cli, addrs...)
	d := &payload.Call{
		CallID: c.meta.CallID, From: from.jid().String(), Status: c.status, IsVideo: c.video, IsGroup: c.group,
		Reason: payload.Text(c.reason), Timestamp: payload.At(c.meta.Timestamp),
	}
	if d.From == "" {
		d.From = c.meta.From.ToNonAD().String()
	}
	d.FromPhone = from.phoneText()
	d.FromLID = from.lidText()
	if !c.meta.GroupJID.IsEmpty() {
		d.GroupJID = payload.Text(c.meta.GroupJID.String())
	}
	// Known before its event is out, so a receiver may reject it at once.
	switch c.status {
	case "offer", "offer_notice":
		r.s.calls.offered(c.meta.CallID, from.pn, from.lid, c.meta.From)
	case "accept", "reject", "terminate":
		r.s.calls.end(c.meta.CallID, c.status)
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindCall, Data: d}) == nil
}

// CallRef names a call: its id, and who called.
type CallRef struct {
	CallID string
	From   types.JID
}

// RejectCall declines an incoming call, as the phone's red button does,
// then publishes call with status reject. Only a ringing call the session
// was offered, named with its caller, is rejected (callmemory.go): else
// nothing is sent or published.
func (m *Manager) RejectCall(ctx context.Context, sessionID string, c CallRef) error {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	if err := s.calls.claim(sessionID, c.CallID, c.From); err != nil {
		return err
	}
	if err := cli.RejectCall(ctx, c.From, c.CallID); err != nil {
		s.calls.settle(c.CallID, false)
		return classify(sessionID, "reject the call", err)
	}
	s.calls.settle(c.CallID, true)
	me := own(cli)
	d := &payload.Call{CallID: c.CallID, From: me.jid().String(), Status: "reject", Timestamp: payload.At(time.Now())}
	d.FromPhone = me.phoneText()
	d.FromLID = me.lidText()
	if err := m.publishEvents(s, nil, Event{Kind: KindCall, Data: d}); err != nil {
		s.log.Warn("a rejected call's event was not stored", "err", err)
	}
	return nil
}
