package wafake_test

import (
	"testing"

	"go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestHistoryWithPushNames: SendHistory hands over the chats with their
// names and unread counts, then the push names in a PUSH_NAME sync of their
// own, which whatsmeow stores as the contacts' names.
func TestHistoryWithPushNames(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220030", "491702220031"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, me)
	syncs := eventsOf[*events.HistorySync](cli)
	chat := types.NewJID(contact, types.DefaultUserServer)
	err := n.SendHistory(me, wafake.History{
		Chats:     []wafake.HistoryChat{{JID: chat, Name: "Pia", Unread: 3, Archived: true}},
		PushNames: map[string]string{contact: "Pia P."},
	})
	if err != nil {
		t.Fatal(err)
	}
	first := nextEvent(t, syncs).Data
	conv := first.GetConversations()
	if first.GetSyncType() != waHistorySync.HistorySync_INITIAL_BOOTSTRAP || len(conv) != 1 || conv[0].GetName() != "Pia" ||
		conv[0].GetUnreadCount() != 3 || !conv[0].GetArchived() {
		t.Errorf("first sync %v %v", first.GetSyncType(), conv)
	}
	names := nextEvent(t, syncs).Data
	if p := names.GetPushnames(); names.GetSyncType() != waHistorySync.HistorySync_PUSH_NAME || len(p) != 1 ||
		p[0].GetID() != chat.String() || p[0].GetPushname() != "Pia P." {
		t.Errorf("push name sync %v %v", names.GetSyncType(), p)
	}
}
