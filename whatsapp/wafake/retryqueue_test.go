package wafake_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestRetryReceiptKeepsQueued: a retry receipt says the device could not
// read a message; it is no acknowledgement, so the message stays queued
// and comes again at the device's next login (issue 22: the network used
// to drop a stanza on any receipt, retry receipts included).
func TestRetryReceiptKeepsQueued(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220041", "491702220042"
	n := startNetwork(t)
	rc := newRetryClient(t, n, me, true)
	rc.refuse.Store(true)

	id, err := n.SendText(contact, me, "read me later")
	if err != nil {
		t.Fatal(err)
	}
	if m := nextEvent(t, rc.got); m.Info.ID != id {
		t.Fatalf("first delivery %s, want %s", m.Info.ID, id)
	}
	if u := n.Unacked(rc.dev); u != 1 {
		t.Fatalf("%d unacknowledged after a failed handler, want 1", u)
	}

	// The retry receipt whatsmeow sends for a message it could not decrypt
	// (retry.go sendRetryReceipt), without the ack it sends after it.
	retry := waBinary.Node{
		Tag: "receipt",
		Attrs: waBinary.Attrs{
			"id": id, "to": types.NewJID(contact, types.DefaultUserServer), "type": "retry",
		},
		Content: []waBinary.Node{{Tag: "retry", Attrs: waBinary.Attrs{
			"count": "1", "id": id, "t": strconv.FormatInt(time.Now().Unix(), 10), "v": "1",
		}}},
	}
	if err := rc.cli.DangerousInternals().SendNode(context.Background(), retry); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "a retry receipt for the message", func() bool {
		return slices.ContainsFunc(n.ReceiptsFor(contact), func(r wafake.ReceiptInfo) bool {
			return r.Type == types.ReceiptTypeRetry && slices.Contains(r.MessageIDs, id)
		})
	})
	if u := n.Unacked(rc.dev); u != 1 {
		t.Fatalf("%d unacknowledged after a retry receipt, want 1: a retry receipt dropped the message", u)
	}

	rc.refuse.Store(false)
	rc.reconnect(t)
	if m := nextEvent(t, rc.got); m.Info.ID != id || m.Message.GetConversation() != "read me later" {
		t.Fatalf("after the next login got %s %q, want %s again", m.Info.ID, m.Message.GetConversation(), id)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })
}
