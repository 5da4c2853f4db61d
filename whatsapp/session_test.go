package whatsapp

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waSyncAction"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"
)

// failingPublisher refuses events while fail is set.
type failingPublisher struct {
	*recorder
	fail atomic.Bool
}

func (p *failingPublisher) Publish(ctx context.Context, id string, ev Event) error {
	if p.fail.Load() {
		return errors.New("event log unavailable")
	}
	return p.recorder.Publish(ctx, id, ev)
}

// TestHandlerSuccessStatus: the event handler reports success to whatsmeow
// only when what the event produced was published, and never for a client
// that is no longer the session's: then whatsmeow does not acknowledge the
// stanza and WhatsApp sends it again.
func TestHandlerSuccessStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &failingPublisher{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses})
	t.Cleanup(m.Close)
	e.statuses.add("s1")
	s, err := m.load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	cli := whatsmeow.NewClient(e.store.NewDevice(), waLog.Noop)
	s.cli, s.stop = cli, func() {}
	run := &clientRun{m: m, s: s, cli: cli}
	pushName := func(name string) any {
		return &events.PushNameSetting{Action: &waSyncAction.PushNameSetting{Name: proto.String(name)}}
	}

	if !run.handleEvent(pushName("Alice")) {
		t.Error("a stored event was not acknowledged")
	}
	if evs := e.pub.events("s1"); len(evs) != 1 || evs[0].Kind != KindCredsUpdate || evs[0].Data["pushName"] != "Alice" {
		t.Errorf("published %+v", evs)
	}
	if m.State("s1").PushName != "Alice" || e.statuses.get("s1").PushName != "Alice" {
		t.Errorf("push name: state %+v, persisted %+v", m.State("s1"), e.statuses.get("s1"))
	}

	pub.fail.Store(true)
	if run.handleEvent(pushName("Bob")) {
		t.Error("an event the publisher refused was acknowledged")
	}
	pub.fail.Store(false)

	stale := &clientRun{m: m, s: s, cli: whatsmeow.NewClient(e.store.NewDevice(), waLog.Noop)}
	n := len(e.pub.events("s1"))
	if stale.handleEvent(pushName("Carol")) || len(e.pub.events("s1")) != n || m.State("s1").PushName == "Carol" {
		t.Error("the event of a replaced client was acknowledged or applied")
	}
	s.mu.Lock()
	s.cli, s.stop = nil, nil // nothing to disconnect at Close
	s.mu.Unlock()
}
