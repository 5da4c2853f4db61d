package whatsapp

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waSyncAction"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// outagePublisher refuses every event while down, and counts what it
// refused.
type outagePublisher struct {
	*recorder
	down    atomic.Bool
	refused atomic.Int32
}

func (p *outagePublisher) Publish(ctx context.Context, id string, ev Event) error {
	if p.down.Load() {
		p.refused.Add(1)
		return errors.New("event log unavailable")
	}
	return p.recorder.Publish(ctx, id, ev)
}

// TestAccountEventsNotStored: a handler whose events the publisher refuses
// reports failure to whatsmeow. For a group notification whatsmeow then
// does not acknowledge it; the session goes down at once and reconnects
// once the events can be stored, and WhatsApp sends the notification
// again then. (App state, block list, picture and status
// notifications are acknowledged by whatsmeow whatever the handler says.)
func TestAccountEventsNotStored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := &outagePublisher{recorder: e.pub}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: pub, Statuses: e.statuses, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	st := e.pairQR(m, "s1", phone)
	dev := parseJID(t, st.JID)
	gj, err := e.net.CreateGroup(peer, "Team", phone)
	if err != nil {
		t.Fatal(err)
	}
	e.next("s1", 0, KindChatsUpsert)

	pub.down.Store(true)
	if err := e.net.SetGroupSubject(peer, gj, "Renamed"); err != nil {
		t.Fatal(err)
	}
	e.waitUntil("the groups.update refused", func() bool { return pub.refused.Load() > 0 })
	if n := e.net.Unacked(dev); n != 1 {
		t.Fatalf("%d stanzas unacknowledged after the event was refused, want 1", n)
	}
	// The session goes down at once, and comes back only once the store
	// takes its events: WhatsApp then sends the notification again.
	e.waitState(m, "s1", "down to recover", func(st SessionState) bool {
		return st.Status == StatusConnecting && st.Reason == reasonEventsFailed
	})
	pub.down.Store(false)
	e.waitStatus(m, "s1", StatusConnected)
	e.waitUntil("the rename published after the reconnect", func() bool {
		for _, ev := range e.pub.events("s1") {
			if ev.Kind == KindGroupsUpdate && ev.Data["subject"] == "Renamed" {
				return true
			}
		}
		return false
	})
	e.waitUntil("the notification acknowledged", func() bool { return e.net.Unacked(dev) == 0 })
	e.settle(st)

	// Every handler answers false while its events cannot be stored, true
	// once they can.
	cli, err := m.client("s1")
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	run := &clientRun{m: m, s: m.sessions["s1"], cli: cli}
	m.mu.Unlock()
	now := time.Now()
	contact := phoneJID(peer)
	handled := []any{
		&events.Blocklist{Changes: []events.BlocklistChange{{JID: contact, Action: events.BlocklistChangeActionBlock}}},
		&events.Archive{JID: contact, Timestamp: now, Action: &waSyncAction.ArchiveChatAction{Archived: proto.Bool(true)}},
		&events.Pin{JID: contact, Timestamp: now, Action: &waSyncAction.PinAction{Pinned: proto.Bool(true)}},
		&events.Mute{JID: contact, Timestamp: now, Action: &waSyncAction.MuteAction{Muted: proto.Bool(true)}},
		&events.MarkChatAsRead{JID: contact, Timestamp: now, Action: &waSyncAction.MarkChatAsReadAction{Read: proto.Bool(true)}},
		&events.ClearChat{JID: contact, Timestamp: now, Action: &waSyncAction.ClearChatAction{}},
		&events.DeleteChat{JID: contact, Timestamp: now, Action: &waSyncAction.DeleteChatAction{}},
		&events.DeleteForMe{ChatJID: contact, MessageID: "X", Timestamp: now, Action: &waSyncAction.DeleteMessageForMeAction{}},
		&events.Star{ChatJID: contact, MessageID: "X", Timestamp: now, Action: &waSyncAction.StarAction{Starred: proto.Bool(true)}},
		&events.Contact{JID: contact, Timestamp: now, Action: &waSyncAction.ContactAction{FullName: proto.String("Erika")}},
		&events.PushName{JID: contact, NewPushName: "Erika"},
		&events.BusinessName{JID: contact, NewBusinessName: "Shop"},
		&events.UserAbout{JID: contact, Status: "hi", Timestamp: now},
		&events.Picture{JID: contact, PictureID: "1", Timestamp: now},
		&events.Picture{JID: gj, PictureID: "2", Timestamp: now},
		&events.JoinedGroup{GroupInfo: types.GroupInfo{JID: gj, GroupName: types.GroupName{Name: "Team"}}},
		&events.GroupInfo{JID: gj, Timestamp: now, Name: &types.GroupName{Name: "Other"}},
		&events.LabelEdit{LabelID: "1", Timestamp: now, Action: &waSyncAction.LabelEditAction{Name: proto.String("L")}},
		&events.LabelAssociationChat{JID: contact, LabelID: "1", Timestamp: now, Action: &waSyncAction.LabelAssociationAction{Labeled: proto.Bool(true)}},
		&events.LabelAssociationMessage{JID: contact, LabelID: "1", MessageID: "X", Timestamp: now, Action: &waSyncAction.LabelAssociationAction{Labeled: proto.Bool(true)}},
	}
	pub.down.Store(true)
	for _, evt := range handled {
		if run.dispatch(evt) {
			t.Errorf("%T was acknowledged while its events could not be stored", evt)
		}
	}
	pub.down.Store(false)
	for _, evt := range handled {
		n := len(e.pub.events("s1"))
		if !run.dispatch(evt) {
			t.Errorf("%T was not acknowledged", evt)
		}
		if len(e.pub.events("s1")) == n {
			t.Errorf("%T published nothing", evt)
		}
	}

	e.settle(st)
}
