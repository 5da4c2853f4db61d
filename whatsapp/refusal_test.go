package whatsapp

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// kindRefuser refuses the events of the kinds in refuse, and records the
// others.
type kindRefuser struct {
	*recorder
	mu      sync.Mutex
	refuse  map[string]int // how many more to refuse; < 0 every one
	refused []string
}

// set refuses every event of kinds from now on, and no other.
func (p *kindRefuser) set(kinds ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = map[string]int{}
	for _, k := range kinds {
		p.refuse[k] = -1
	}
}

// setTimes refuses the next n events of kind, and no other.
func (p *kindRefuser) setTimes(kind string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = map[string]int{kind: n}
}

func (p *kindRefuser) refusals() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.refused...)
}

func (p *kindRefuser) Publish(ctx context.Context, id string, ev Event) error {
	p.mu.Lock()
	left := p.refuse[ev.Kind]
	refuse := left != 0
	if refuse {
		p.refused = append(p.refused, ev.Kind)
		if left > 0 {
			p.refuse[ev.Kind] = left - 1
		}
	}
	p.mu.Unlock()
	if refuse {
		return errors.New("event log unavailable")
	}
	return p.recorder.Publish(ctx, id, ev)
}

// TestHandlersReportRefusal: each of these handlers returns false when its
// event could not be stored, so whatsmeow does not acknowledge the stanza
// (where it lets the handler decide: messages; it acknowledges calls,
// notifications and undecryptable messages before or whatever the handler
// says, and presence is never acknowledged).
func TestHandlersReportRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &kindRefuser{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	e.pairQR(m, "s1", phone)
	m.mu.Lock()
	s := m.sessions["s1"]
	m.mu.Unlock()
	s.mu.Lock()
	run := &clientRun{m: m, s: s, cli: s.cli}
	s.mu.Unlock()

	contact := phoneJID(peer)
	lid := types.NewJID("99887766554433", types.HiddenUserServer)
	meta := types.BasicCallMeta{From: contact, CallCreator: contact, CallID: "C1", Timestamp: time.Now()}
	src := types.MessageSource{Chat: contact, Sender: contact}
	msg := func(src types.MessageSource, m *waE2E.Message) *events.Message {
		return &events.Message{Info: types.MessageInfo{MessageSource: src, ID: "3EB0REFUSED", Timestamp: time.Now()}, Message: m}
	}
	tests := []struct {
		name, kind string
		evt        any
	}{
		{"call offer", KindCall, &events.CallOffer{BasicCallMeta: meta}},
		{"call offer notice", KindCall, &events.CallOfferNotice{BasicCallMeta: meta, Media: "audio"}},
		{"call accept", KindCall, &events.CallAccept{BasicCallMeta: meta}},
		{"call preaccept", KindCall, &events.CallPreAccept{BasicCallMeta: meta}},
		{"call transport", KindCall, &events.CallTransport{BasicCallMeta: meta}},
		{"call terminate", KindCall, &events.CallTerminate{BasicCallMeta: meta, Reason: "timeout"}},
		{"call reject", KindCall, &events.CallReject{BasicCallMeta: meta}},
		{"call relay latency", KindCall, &events.CallRelayLatency{BasicCallMeta: meta}},
		{"presence", KindPresenceUpdate, &events.Presence{From: contact}},
		{"chat presence", KindPresenceUpdate, &events.ChatPresence{MessageSource: src, State: types.ChatPresenceComposing}},
		{"offline preview", KindConnectionUpdate, &events.OfflineSyncPreview{Total: 1, Messages: 1}},
		{"offline completed", KindConnectionUpdate, &events.OfflineSyncCompleted{Count: 1}},
		{"undecryptable", KindMessagesUpdate, &events.UndecryptableMessage{Info: types.MessageInfo{MessageSource: src, ID: "3EB0LOST"}}},
		{"poll vote", KindMessagesUpdate, msg(src, &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{
			PollCreationMessageKey: &waCommon.MessageKey{ID: proto.String("3EB0POLL"), FromMe: proto.Bool(true)},
		}})},
		{"media retry", KindMediaUpdate, &events.MediaRetry{MessageID: "3EB0MEDIA", ChatID: contact, Error: &events.MediaRetryError{Code: 2}}},
		{"phone number share", KindPhoneNumberShare, msg(types.MessageSource{Chat: lid, Sender: lid, SenderAlt: contact}, &waE2E.Message{
			ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_SHARE_PHONE_NUMBER.Enum()},
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub.set(tt.kind)
			n := len(pub.refusals())
			if run.dispatch(tt.evt) {
				t.Errorf("handler reported success for a refused %s", tt.kind)
			}
			if got := pub.refusals()[n:]; len(got) != 1 || got[0] != tt.kind {
				t.Errorf("refused %v, want one %s", got, tt.kind)
			}
			pub.set()
			if !run.dispatch(tt.evt) {
				t.Errorf("handler reported failure for an accepted %s", tt.kind)
			}
		})
	}
}

// TestHistoryNotStored: whatsmeow acknowledges a history notification (a
// peer_msg receipt) before the handler runs, so the handler retries: a
// store that fails a few times still gets every event once; one that keeps
// failing loses the rest of the sync (the handler reports the failure,
// the phone is not told the sync arrived, and the blob stays).
func TestHistoryNotStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &kindRefuser{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", phone)
	history := func(id string) {
		t.Helper()
		err := e.net.SendHistorySync(phone, []wafake.HistoryChat{{JID: phoneJID(peer), Messages: []wafake.HistoryMessage{
			{ID: id, Text: "keep me", Time: time.Now()},
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	sets := func(id string) int {
		n := 0
		for _, ev := range e.pub.events("s1") {
			if msgs, _ := ev.Data["messages"].([]any); ev.Kind == KindHistorySet && len(msgs) == 1 && msgs[0].(map[string]any)["id"] == id {
				n++
			}
		}
		return n
	}

	t.Run("transient", func(t *testing.T) {
		pub.setTimes(KindHistorySet, 2)
		history("3EB0KEEP")
		e.waitUntil("the history published", func() bool { return sets("3EB0KEEP") > 0 })
		e.settle(st)
		if n, refused := sets("3EB0KEEP"), len(pub.refusals()); n != 1 || refused != 2 {
			t.Errorf("published %d times after %d refusals, want once after 2", n, refused)
		}
	})
	t.Run("persistent", func(t *testing.T) {
		pub.set(KindHistorySet)
		n := len(pub.refusals())
		history("3EB0LOST")
		e.waitUntil("every attempt refused", func() bool { return len(pub.refusals())-n == historyAttempts })
		e.settle(st)
		if sets("3EB0LOST") != 0 {
			t.Error("a refused history was published")
		}
		pub.set()
	})
}

// TestVoteNotStored: a poll vote (a message) whose event could not be
// stored is not acknowledged; WhatsApp sends it again at the next login
// and it is published then.
func TestVoteNotStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &kindRefuser{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", phone)
	dev := parseJID(t, st.JID)
	pollID, err := e.net.SendPoll(peer, phone, "Lunch?", []string{"pizza", "sushi"})
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, pollID)
	e.settle(st)

	pub.set(KindMessagesUpdate)
	voteID, err := e.net.VotePoll(pollID, phone, []string{"pizza"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitUntil("the vote refused", func() bool { return len(pub.refusals()) > 0 })
	if n := e.net.Unacked(dev); n != 1 {
		t.Fatalf("%d stanzas unacknowledged after the vote was refused, want 1", n)
	}
	pub.set()
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	ev := e.eventWhere("s1", KindMessagesUpdate, func(d map[string]any) bool { return d["messageId"] == voteID })
	pv, _ := ev.Data["vote"].(map[string]any)
	wantData(t, "vote", pv, map[string]any{"selectedOptions": []string{"pizza"}})
	e.settle(st)
}
