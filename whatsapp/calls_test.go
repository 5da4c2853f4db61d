package whatsapp

import (
	"testing"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// eventWhere waits for an event of kind of session sid whose data
// satisfies ok, and returns it.
func (e *env) eventWhere(sid, kind string, ok func(map[string]any) bool) published {
	e.t.Helper()
	return e.eventAfter(sid, 0, kind, ok)
}

// eventAfter is eventWhere among the events from the from-th on.
func (e *env) eventAfter(sid string, from int, kind string, ok func(map[string]any) bool) published {
	e.t.Helper()
	var ev published
	e.waitUntil(kind, func() bool {
		for _, x := range e.pub.events(sid)[from:] {
			if x.Kind == kind && ok(x.Data) {
				ev = x
				return true
			}
		}
		return false
	})
	return ev
}

// lidOf is the LID of account phone in the network, "…@lid" (the network
// makes an account at its first use).
func (e *env) lidOf(phone string) string {
	e.t.Helper()
	a, ok := e.net.Account(phone)
	if !ok || a.LID.IsEmpty() {
		e.t.Fatalf("account %s has no LID", phone)
	}
	return a.LID.String()
}

// TestCalls: every stage of a call's signalling the network relays becomes
// a call event naming the caller by number and LID.
func TestCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	group := phoneJID(peer2) // any JID will do as a group's in the stanza
	group.Server = "g.us"

	tests := []struct {
		stanza wafake.CallStanza
		want   map[string]any
	}{
		{wafake.CallStanza{Stage: "offer", Video: true}, map[string]any{"status": "offer", "isVideo": true, "isGroup": false, "groupJid": nil, "reason": nil}},
		{wafake.CallStanza{Stage: "offer"}, map[string]any{"status": "offer", "isVideo": false}},
		{wafake.CallStanza{Stage: "offer_notice", Group: group}, map[string]any{"status": "offer_notice", "isVideo": false, "isGroup": true, "groupJid": group.String()}},
		{wafake.CallStanza{Stage: "accept"}, map[string]any{"status": "accept", "isVideo": nil}},
		{wafake.CallStanza{Stage: "preaccept"}, map[string]any{"status": "preaccept"}},
		{wafake.CallStanza{Stage: "transport"}, map[string]any{"status": "transport"}},
		{wafake.CallStanza{Stage: "relaylatency"}, map[string]any{"status": "relaylatency"}},
		{wafake.CallStanza{Stage: "reject"}, map[string]any{"status": "reject", "reason": nil}},
		{wafake.CallStanza{Stage: "terminate", Reason: "timeout"}, map[string]any{"status": "terminate", "reason": "timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.stanza.Stage, func(t *testing.T) {
			id, err := e.net.Call(peer, phoneJID(phone), tt.stanza)
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := e.eventBy("s1", KindCall, "callId", id)
			wantData(t, "call", ev.Data, map[string]any{"from": phoneJID(peer).String(), "fromPhone": peer, "fromLid": e.lidOf(peer)})
			wantData(t, "call", ev.Data, tt.want)
			if ts, _ := ev.Data["timestamp"].(string); ts == "" {
				t.Errorf("call without a timestamp: %v", ev.Data)
			}
		})
	}
	e.settle(st)
}
