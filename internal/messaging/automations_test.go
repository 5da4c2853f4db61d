package messaging

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestAutomationsFollow: the queue takes what the settings act on (a
// received message a phone would mark read, a call offered, the session
// connected) and nothing else; past its bound events are let go with one
// warning, never blocking the sink.
func TestAutomationsFollow(t *testing.T) {
	log, logs := logtest.New(nil)
	a := NewAutomations(log)
	msg := func(fromMe bool, typ string) whatsapp.Event {
		return whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: &whatsapp.Message{ID: "M", Chat: peerJID, FromMe: fromMe, Type: typ}}
	}
	a.Follow("s1", []whatsapp.Event{
		msg(false, "text"), msg(true, "text"), msg(false, "reaction"), msg(false, "revoke"),
		{Kind: whatsapp.KindCall, Data: &payload.Call{CallID: "C", Status: "offer"}},
		{Kind: whatsapp.KindCall, Data: &payload.Call{CallID: "C", Status: "terminate"}},
		{Kind: whatsapp.KindConnectionUpdate, Data: &payload.Connection{Status: string(whatsapp.StatusConnected)}},
		{Kind: whatsapp.KindConnectionUpdate, Data: &payload.Connection{Status: "DISCONNECTED"}},
	})
	var kinds []string
	for len(a.queue) > 0 {
		kinds = append(kinds, (<-a.queue).ev.Kind)
	}
	if got := strings.Join(kinds, " "); got != "inbound-message.upsert call connection.update" {
		t.Errorf("queued %q, want a received text, a call offer and the session connected", got)
	}
	burst := make([]whatsapp.Event, automationBacklog+10)
	for i := range burst {
		burst[i] = msg(false, "text")
	}
	a.Follow("s1", burst)
	if len(a.queue) != automationBacklog || a.dropped.Load() != 10 {
		t.Errorf("after a burst: %d queued, %d let go; want %d and 10", len(a.queue), a.dropped.Load(), automationBacklog)
	}
	if n := strings.Count(logs.String(), "automations are let go"); n != 1 {
		t.Errorf("%d warnings for the events let go, want 1: %s", n, logs.String())
	}
}
