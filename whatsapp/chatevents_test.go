package whatsapp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// next waits for the first event of kind in session sid at or after
// position from, and returns it with the position after it.
func (e *env) next(sid string, from int, kind string) (published, int) {
	e.t.Helper()
	var ev published
	at := -1
	e.waitUntil(fmt.Sprintf("%s after event %d of %s", kind, from, sid), func() bool {
		evs := e.pub.events(sid)
		for i := from; i < len(evs); i++ {
			if evs[i].Kind == kind {
				ev, at = evs[i], i
				return true
			}
		}
		return false
	})
	return ev, at + 1
}

// kindsFrom lists the kinds of the events of sid from position from on.
func (e *env) kindsFrom(sid string, from int) []string {
	var out []string
	for _, ev := range e.pub.events(sid)[from:] {
		out = append(out, ev.Kind)
	}
	return out
}

// appStateSynced waits until session sid's device has synced the
// collections the network's phone writes to, so that what the phone writes
// next reaches the session as changes (a device's first sync of a
// collection is a full sync, which whatsmeow applies without events).
func (e *env) appStateSynced(m *Manager, sid string) {
	e.t.Helper()
	cli, err := m.client(sid)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, name := range []appstate.WAPatchName{
		appstate.WAPatchRegular, appstate.WAPatchRegularLow, appstate.WAPatchRegularHigh, appstate.WAPatchCriticalUnblockLow,
	} {
		e.waitUntil("the session synced app state "+string(name), func() bool {
			v, _, err := cli.Store.AppState.GetAppStateVersion(ctx, string(name))
			return err == nil && v >= 1
		})
	}
}

// exactData checks that data has exactly the keys of want with their
// values, compared as JSON; a want value of anyTime accepts any timestamp
// within a minute of now.
func exactData(t *testing.T, what string, data, want map[string]any) {
	t.Helper()
	var extra []string
	for k := range data {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("%s: unexpected keys %v in %v", what, extra, data)
	}
	for k, v := range want {
		got, present := data[k]
		if !present {
			t.Errorf("%s: no key %s", what, k)
			continue
		}
		if v == anyTime {
			s, _ := got.(string)
			if ts, err := time.Parse(time.RFC3339, s); err != nil || time.Since(ts) > time.Minute || time.Until(ts) > time.Minute || !strings.HasSuffix(s, "Z") {
				t.Errorf("%s: %s = %v, want a timestamp of now", what, k, got)
			}
			continue
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(v)
		if string(g) != string(w) {
			t.Errorf("%s: %s = %s, want %s", what, k, g, w)
		}
	}
}

// anyTime stands for a timestamp of now in exactData.
const anyTime = "<now>"

// chatUpdate is a chats.update's data with only the given keys set.
func chatUpdate(id string, set map[string]any) map[string]any {
	d := map[string]any{
		"id": id, "archived": nil, "pinned": nil, "muted": nil, "muteUntil": nil, "read": nil,
		"unreadCount": nil, "cleared": nil, "ephemeralSeconds": nil, "timestamp": anyTime,
	}
	for k, v := range set {
		d[k] = v
	}
	return d
}

// TestChatEvents: what the phone does to the account's chats and to
// messages for the account only arrives as app state, and each change is
// one event: chats.update, chats.delete, messages.delete, messages.update
// for stars.
func TestChatEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	e.appStateSynced(m, "s1")
	chat := phoneJID(peer).String()
	group := types.NewJID("120363000000000042", types.GroupServer)
	until := time.Now().Add(8 * time.Hour).Truncate(time.Millisecond)
	// The contact writes first: the session learns its LID with it.
	id, err := e.net.SendText(peer, phone, "hello")
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, id)
	e.next("s1", 0, KindContactsUpdate) // its push name, learned on a goroutine of whatsmeow's
	peerAcct, _ := e.net.Account(peer)

	type want struct {
		kind string
		data map[string]any
	}
	tests := []struct {
		name  string
		phone func() error
		want  []want // in order, from the events after the action
	}{
		{"archive", func() error { return e.net.ArchiveChat(phone, phoneJID(peer), true) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"archived": true})},
			// Archiving unpins, as the apps do.
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"pinned": false})},
		}},
		{"unarchive", func() error { return e.net.ArchiveChat(phone, phoneJID(peer), false) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"archived": false})},
		}},
		{"pin", func() error { return e.net.PinChat(phone, phoneJID(peer), true) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"pinned": true})},
		}},
		{"mute until", func() error { return e.net.MuteChat(phone, phoneJID(peer), true, until) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"muted": true, "muteUntil": Timestamp(until)})},
		}},
		{"mute for ever", func() error { return e.net.MuteChat(phone, phoneJID(peer), true, time.Time{}) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"muted": true})},
		}},
		{"unmute", func() error { return e.net.MuteChat(phone, phoneJID(peer), false, time.Time{}) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"muted": false})},
		}},
		{"mark read", func() error { return e.net.MarkChatRead(phone, phoneJID(peer), true) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"read": true, "unreadCount": 0})},
		}},
		{"mark unread", func() error { return e.net.MarkChatRead(phone, phoneJID(peer), false) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"read": false})},
		}},
		// A chat named by the contact's LID is named by its number, as
		// message events name it.
		{"pin a LID chat", func() error { return e.net.PinChat(phone, peerAcct.LID, false) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"pinned": false})},
		}},
		{"star", func() error {
			return e.net.StarMessage(phone, phoneJID(peer), wafake.MessageKey{ID: "3EB0STAR", FromMe: true}, true)
		}, []want{
			{KindMessagesUpdate, map[string]any{
				"id": "3EB0STAR", "chat": chat, "status": "starred", "timestamp": anyTime,
				"error": nil, "messageId": nil, "text": nil, "caption": nil, "sender": nil, "vote": nil,
			}},
		}},
		{"unstar in a group", func() error {
			return e.net.StarMessage(phone, group, wafake.MessageKey{ID: "3EB0GRP", Sender: phoneJID(peer2)}, false)
		}, []want{
			{KindMessagesUpdate, map[string]any{
				"id": "3EB0GRP", "chat": group.String(), "status": "unstarred", "timestamp": anyTime,
				"error": nil, "messageId": nil, "text": nil, "caption": nil, "sender": phoneJID(peer2).String(), "vote": nil,
			}},
		}},
		{"delete for me", func() error {
			return e.net.DeleteMessageForMe(phone, phoneJID(peer), wafake.MessageKey{ID: "3EB0GONE"}, true)
		}, []want{
			{KindMessagesDelete, map[string]any{
				"id": "3EB0GONE", "chat": chat, "fromMe": false, "sender": nil, "all": false, "deleteMedia": true, "timestamp": anyTime,
			}},
		}},
		{"delete for me in a group", func() error {
			return e.net.DeleteMessageForMe(phone, group, wafake.MessageKey{ID: "3EB0GGONE", Sender: phoneJID(peer2)}, false)
		}, []want{
			{KindMessagesDelete, map[string]any{
				"id": "3EB0GGONE", "chat": group.String(), "fromMe": false, "sender": phoneJID(peer2).String(),
				"all": false, "deleteMedia": false, "timestamp": anyTime,
			}},
		}},
		{"clear", func() error { return e.net.ClearChat(phone, phoneJID(peer), false) }, []want{
			{KindChatsUpdate, chatUpdate(chat, map[string]any{"cleared": true})},
			{KindMessagesDelete, map[string]any{
				"id": nil, "chat": chat, "fromMe": nil, "sender": nil, "all": true, "deleteMedia": false, "timestamp": anyTime,
			}},
		}},
		{"delete chat", func() error { return e.net.DeleteChat(phone, phoneJID(peer), true) }, []want{
			{KindChatsDelete, map[string]any{"id": chat, "deleteMedia": true, "timestamp": anyTime}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := len(e.pub.events("s1"))
			if err := tt.phone(); err != nil {
				t.Fatal(err)
			}
			e.waitUntil(fmt.Sprintf("%d events", len(tt.want)), func() bool { return len(e.pub.events("s1")) >= from+len(tt.want) })
			evs := e.pub.events("s1")[from:]
			if len(evs) != len(tt.want) {
				t.Fatalf("events %v, want %d", e.kindsFrom("s1", from), len(tt.want))
			}
			for i, w := range tt.want {
				if evs[i].Kind != w.kind {
					t.Errorf("event %d is %s, want %s", i, evs[i].Kind, w.kind)
					continue
				}
				exactData(t, w.kind, evs[i].Data, w.data)
			}
		})
	}
	e.settle(st)
}
