package wafake_test

import (
	"context"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// waitAppStateSynced waits until cli holds the app state key and has
// synced the collections the phone seeded, so that what the phone writes
// next reaches it as changes (with events), not in a first full sync.
func waitAppStateSynced(t *testing.T, cli *whatsmeow.Client) {
	t.Helper()
	waitAppStateKey(t, cli)
	for _, name := range []appstate.WAPatchName{
		appstate.WAPatchRegular, appstate.WAPatchRegularLow, appstate.WAPatchRegularHigh, appstate.WAPatchCriticalUnblockLow,
	} {
		testclient.Until(t, 10*time.Second, "the app state collection fetched", func() bool {
			v, _, err := cli.Store.AppState.GetAppStateVersion(context.Background(), string(name))
			return err == nil && v >= 1
		})
	}
}

// TestPhoneAppStateWrites: what the phone does to chats, messages,
// contacts and labels reaches a linked device as app state patches that
// whatsmeow decrypts, verifies (MACs chained on the network's LTHash of
// the collection) and turns into its events, also after the device itself
// wrote to the same collection.
func TestPhoneAppStateWrites(t *testing.T) {
	t.Parallel()
	const phone, contact = "491701234571", "4915155509876"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	waitAppStateSynced(t, cli)
	chat := pn(contact)
	group := types.NewJID("120363000000000001", types.GroupServer)
	key := wafake.MessageKey{ID: "3EB0AA", FromMe: false, Sender: pn(contact)}
	until := time.Now().Add(time.Hour).Truncate(time.Millisecond)

	archived := eventsOf[*events.Archive](cli)
	pinned := eventsOf[*events.Pin](cli)
	muted := eventsOf[*events.Mute](cli)
	read := eventsOf[*events.MarkChatAsRead](cli)
	cleared := eventsOf[*events.ClearChat](cli)
	deleted := eventsOf[*events.DeleteChat](cli)
	forMe := eventsOf[*events.DeleteForMe](cli)
	starred := eventsOf[*events.Star](cli)
	contacts := eventsOf[*events.Contact](cli)
	labels := eventsOf[*events.LabelEdit](cli)
	labelChats := eventsOf[*events.LabelAssociationChat](cli)
	labelMsgs := eventsOf[*events.LabelAssociationMessage](cli)

	steps := []struct {
		name  string
		write func() error
		check func(t *testing.T)
	}{
		{"archive", func() error { return n.ArchiveChat(phone, chat, true) }, func(t *testing.T) {
			if e := nextEvent(t, archived); e.JID != chat || !e.Action.GetArchived() {
				t.Errorf("Archive %+v", e)
			}
			if e := nextEvent(t, pinned); e.JID != chat || e.Action.GetPinned() {
				t.Errorf("archiving unpins: %+v", e)
			}
		}},
		{"pin", func() error { return n.PinChat(phone, chat, true) }, func(t *testing.T) {
			if e := nextEvent(t, pinned); e.JID != chat || !e.Action.GetPinned() {
				t.Errorf("Pin %+v", e)
			}
		}},
		{"mute until", func() error { return n.MuteChat(phone, chat, true, until) }, func(t *testing.T) {
			if e := nextEvent(t, muted); e.JID != chat || !e.Action.GetMuted() || e.Action.GetMuteEndTimestamp() != until.UnixMilli() {
				t.Errorf("Mute %+v", e)
			}
		}},
		{"mute for ever", func() error { return n.MuteChat(phone, chat, true, time.Time{}) }, func(t *testing.T) {
			if e := nextEvent(t, muted); !e.Action.GetMuted() || e.Action.GetMuteEndTimestamp() != -1 {
				t.Errorf("Mute %+v", e)
			}
		}},
		{"mark unread", func() error { return n.MarkChatRead(phone, chat, false) }, func(t *testing.T) {
			if e := nextEvent(t, read); e.JID != chat || e.Action.GetRead() {
				t.Errorf("MarkChatAsRead %+v", e)
			}
		}},
		{"star", func() error { return n.StarMessage(phone, group, key, true) }, func(t *testing.T) {
			if e := nextEvent(t, starred); e.ChatJID != group || e.MessageID != key.ID || e.IsFromMe || e.SenderJID != pn(contact) || !e.Action.GetStarred() {
				t.Errorf("Star %+v", e)
			}
		}},
		{"delete for me", func() error {
			return n.DeleteMessageForMe(phone, chat, wafake.MessageKey{ID: "3EB0BB", FromMe: true}, true)
		}, func(t *testing.T) {
			if e := nextEvent(t, forMe); e.ChatJID != chat || e.MessageID != "3EB0BB" || !e.IsFromMe || !e.SenderJID.IsEmpty() || !e.Action.GetDeleteMedia() {
				t.Errorf("DeleteForMe %+v", e)
			}
		}},
		{"clear", func() error { return n.ClearChat(phone, chat, true) }, func(t *testing.T) {
			if e := nextEvent(t, cleared); e.JID != chat || !e.DeleteMedia {
				t.Errorf("ClearChat %+v", e)
			}
		}},
		{"delete chat", func() error { return n.DeleteChat(phone, chat, false) }, func(t *testing.T) {
			if e := nextEvent(t, deleted); e.JID != chat || e.DeleteMedia {
				t.Errorf("DeleteChat %+v", e)
			}
		}},
		{"contact", func() error { return n.EditContact(phone, contact, "Erika Mustermann", "Erika") }, func(t *testing.T) {
			acct, _ := n.Account(contact)
			if e := nextEvent(t, contacts); e.JID != chat || e.Action.GetFullName() != "Erika Mustermann" || e.Action.GetFirstName() != "Erika" || e.Action.GetLidJID() != acct.LID.String() {
				t.Errorf("Contact %+v", e)
			}
		}},
		{"label", func() error { return n.EditLabel(phone, "7", "Leads", 3, false) }, func(t *testing.T) {
			if e := nextEvent(t, labels); e.LabelID != "7" || e.Action.GetName() != "Leads" || e.Action.GetColor() != 3 || e.Action.GetDeleted() {
				t.Errorf("LabelEdit %+v", e)
			}
		}},
		{"label a chat", func() error { return n.LabelChat(phone, "7", chat, true) }, func(t *testing.T) {
			if e := nextEvent(t, labelChats); e.LabelID != "7" || e.JID != chat || !e.Action.GetLabeled() {
				t.Errorf("LabelAssociationChat %+v", e)
			}
		}},
		{"label a message", func() error { return n.LabelMessage(phone, "7", chat, "3EB0CC", true) }, func(t *testing.T) {
			if e := nextEvent(t, labelMsgs); e.LabelID != "7" || e.JID != chat || e.MessageID != "3EB0CC" || !e.Action.GetLabeled() {
				t.Errorf("LabelAssociationMessage %+v", e)
			}
		}},
		// The device writes to the same collection; the phone's next
		// patch chains on the device's.
		{"device pins, phone unpins", func() error {
			if err := cli.SendAppState(context.Background(), appstate.BuildPin(chat, true)); err != nil {
				return err
			}
			return n.PinChat(phone, chat, false)
		}, func(t *testing.T) {
			// whatsmeow reports the device's own write back too.
			if e := nextEvent(t, pinned); !e.Action.GetPinned() {
				t.Errorf("the device's Pin %+v", e)
			}
			if e := nextEvent(t, pinned); e.Action.GetPinned() {
				t.Errorf("Pin after the device's write %+v", e)
			}
		}},
		{"label again", func() error { return n.EditLabel(phone, "7", "Customers", 4, false) }, func(t *testing.T) {
			if e := nextEvent(t, labels); e.Action.GetName() != "Customers" {
				t.Errorf("LabelEdit %+v", e)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := s.write(); err != nil {
				t.Fatal(err)
			}
			s.check(t)
		})
	}
	// The device's state still verifies against the network's in full.
	for _, name := range appstate.AllPatchNames {
		if err := cli.FetchAppState(context.Background(), name, true, false); err != nil {
			t.Errorf("full sync of %s: %v", name, err)
		}
	}
}

// TestAppStateSynced: once the network says a device synced the phone's
// collections, what the phone writes next is an event on the device (not
// folded silently into the device's first full sync); before linking
// there is no such device.
func TestAppStateSynced(t *testing.T) {
	t.Parallel()
	const phone, contact = "491701234581", "4915155509881"
	n := startNetwork(t)
	if n.AppStateSynced(types.JID{User: phone, Device: 1, Server: types.DefaultUserServer}) {
		t.Fatal("a device synced before it was linked")
	}
	cli, ps := linkSettled(t, n, phone)
	archived := eventsOf[*events.Archive](cli)
	labels := eventsOf[*events.LabelEdit](cli)
	testclient.Until(t, 10*time.Second, `n.AppStateSynced(ps.ID)`, func() bool { return n.AppStateSynced(ps.ID) })
	if err := n.ArchiveChat(phone, pn(contact), true); err != nil {
		t.Fatal(err)
	}
	if err := n.EditLabel(phone, "3", "Leads", 1, false); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, archived); e.JID != pn(contact) || !e.Action.GetArchived() {
		t.Errorf("Archive %+v", e)
	}
	if e := nextEvent(t, labels); e.LabelID != "3" {
		t.Errorf("LabelEdit %+v", e)
	}
}
