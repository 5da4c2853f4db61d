package wafake_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestPhoneHistory: the phone keeps every message of its chats; a device
// linking gets each chat with its most recent message only, and older ones
// when it asks (BuildHistorySyncRequest through SendPeerMessage): an
// on-demand sync naming the request, empty when the phone holds nothing
// older. What the account sends and receives joins the phone's history.
func TestPhoneHistory(t *testing.T) {
	t.Parallel()
	const phone, contact = "491701239001", "491701239002"
	n := startNetwork(t)
	chat := types.NewJID(contact, types.DefaultUserServer)
	when := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	old := []wafake.HistoryMessage{
		{ID: "3EB0OLD1", Text: "first", Time: when},
		{ID: "3EB0OLD2", FromMe: true, Text: "second", Time: when.Add(time.Minute)},
		{ID: "3EB0OLD3", Text: "third", Time: when.Add(2 * time.Minute)},
	}
	if err := n.AddHistory(phone, chat, old[2], old[0], old[1]); err != nil {
		t.Fatal(err)
	}

	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	syncs := eventsOf[*events.HistorySync](cli)
	ps, err := link(n, cli, phone)
	if err != nil {
		cli.Disconnect()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		quiesce(n, ps.ID)
		cli.Disconnect()
	})
	ids := func(h *events.HistorySync) []string {
		var out []string
		for _, c := range h.Data.GetConversations() {
			if c.GetID() != chat.String() {
				t.Errorf("conversation %s, want %s", c.GetID(), chat)
			}
			for _, m := range c.GetMessages() {
				out = append(out, m.GetMessage().GetKey().GetID())
			}
		}
		return out
	}
	first := nextEvent(t, syncs)
	if first.Data.GetSyncType() != waHistorySync.HistorySync_INITIAL_BOOTSTRAP || !slices.Equal(ids(first), []string{"3EB0OLD3"}) {
		t.Fatalf("sync at link %s %v, want INITIAL_BOOTSTRAP with the most recent message only", first.Data.GetSyncType(), ids(first))
	}

	ctx := context.Background()
	ask := func(anchor wafake.HistoryMessage, count int) (*events.HistorySync, string) {
		t.Helper()
		info := &types.MessageInfo{MessageSource: types.MessageSource{Chat: chat, IsFromMe: anchor.FromMe}, ID: anchor.ID, Timestamp: anchor.Time}
		resp, err := cli.SendPeerMessage(ctx, cli.BuildHistorySyncRequest(info, count))
		if err != nil {
			t.Fatal(err)
		}
		return nextEvent(t, syncs), resp.ID
	}
	for _, tt := range []struct {
		anchor wafake.HistoryMessage
		count  int
		want   []string
	}{
		{old[2], 50, []string{"3EB0OLD1", "3EB0OLD2"}},
		{old[2], 1, []string{"3EB0OLD2"}},
		{old[0], 50, nil},
		// An anchor the phone does not hold: the messages before its time.
		{wafake.HistoryMessage{ID: "3EB0ELSEWHERE", Time: when.Add(90 * time.Second)}, 50, []string{"3EB0OLD1", "3EB0OLD2"}},
	} {
		h, reqID := ask(tt.anchor, tt.count)
		if h.Data.GetSyncType() != waHistorySync.HistorySync_ON_DEMAND || len(h.Data.GetConversations()) != 1 || !slices.Equal(ids(h), tt.want) {
			t.Errorf("answer before %s (count %d): %s %v, want ON_DEMAND with the chat and %v", tt.anchor.ID, tt.count, h.Data.GetSyncType(), ids(h), tt.want)
		}
		if got := h.Notification.GetPeerDataRequestSessionID(); got != reqID {
			t.Errorf("answer names request %q, want %q", got, reqID)
		}
	}

	// Live messages join both phones' histories.
	in, err := n.SendText(contact, phone, "live in")
	if err != nil {
		t.Fatal(err)
	}
	sent, err := cli.SendMessage(ctx, chat, &waE2E.Message{Conversation: proto.String("live out")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range n.PhoneHistory(phone, chat) {
		got = append(got, m.ID)
	}
	if !slices.Contains(got, in) || !slices.Contains(got, sent.ID) || len(got) != 5 {
		t.Errorf("phone's history of the chat %v, want the three old messages, %s and %s", got, in, sent.ID)
	}
	theirs := n.PhoneHistory(contact, types.NewJID(phone, types.DefaultUserServer))
	if i := slices.IndexFunc(theirs, func(m wafake.HistoryMessage) bool { return m.ID == sent.ID }); i < 0 || theirs[i].FromMe {
		t.Errorf("contact's history %+v, want %s received", theirs, sent.ID)
	}
}
