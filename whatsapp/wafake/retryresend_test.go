package wafake_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// retryClient is a linked device whose handler can refuse messages (then
// whatsmeow neither acknowledges them nor sends a delivery receipt, so they
// stay queued), with the events a retry test watches.
type retryClient struct {
	cli       *whatsmeow.Client
	dev       types.JID
	refuse    atomic.Bool
	got       chan *events.Message
	lost      chan *events.UndecryptableMessage
	connected chan struct{}
}

func newRetryClient(t *testing.T, n *wafake.Network, phone string, synchronousAck bool) *retryClient {
	t.Helper()
	cli, ps := linkByQR(t, n, phone)
	cli.SynchronousAck = synchronousAck
	cli.EnableDecryptedEventBuffer = true // a replayed ciphertext decrypts from the buffer
	rc := &retryClient{
		cli: cli, dev: ps.ID, got: make(chan *events.Message, 16),
		lost: make(chan *events.UndecryptableMessage, 16), connected: make(chan struct{}, 4),
	}
	cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		switch e := evt.(type) {
		case *events.Message:
			if e.Info.IsFromMe {
				return true
			}
			ok := !rc.refuse.Load() // decided before the test hears of it
			rc.got <- e
			return ok
		case *events.UndecryptableMessage:
			rc.lost <- e
		case *events.Connected:
			rc.connected <- struct{}{}
		}
		return true
	})
	return rc
}

func (rc *retryClient) reconnect(t *testing.T) {
	t.Helper()
	rc.cli.Disconnect()
	if err := rc.cli.Connect(); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, rc.connected)
}

// loseSession deletes the device's Signal session with contact, as a
// device whose store lost it: what the contact's phone encrypts in that
// session no longer decrypts.
func (rc *retryClient) loseSession(t *testing.T, n *wafake.Network, contact string) {
	t.Helper()
	ctx := context.Background()
	acct, _ := n.Account(contact)
	for _, j := range []types.JID{acct.LID, types.NewJID(contact, types.DefaultUserServer)} {
		if err := rc.cli.Store.Sessions.DeleteSession(ctx, j.SignalAddress().String()); err != nil {
			t.Fatal(err)
		}
	}
	if has, err := rc.cli.Store.ContainsSession(ctx, acct.LID.SignalAddress()); err != nil || has {
		t.Fatalf("session with %s still there (%v)", acct.LID, err)
	}
}

// settled waits until the device has sent nothing for a moment: the acks
// whatsmeow sends for copies it could not decrypt have reached the network.
func settled(t *testing.T, n *wafake.Network, dev types.JID) {
	t.Helper()
	testclient.Until(t, 10*time.Second, `n.Idle(dev) > 300*time.Millisecond`, func() bool { return n.Idle(dev) > 300*time.Millisecond })
}

// TestRetryResendAfterLostSession: a device that lost its Signal session
// with a contact cannot decrypt the contact's next message and sends a
// retry receipt; the contact's phone sends it again, in the old session
// (count 1, still unreadable), then — the second receipt carries the
// device's keys — in a new one: the device reads the message, with
// whatsmeow's RetryCount 2. The acks whatsmeow sends for the unreadable
// copies do not take the readable one off the queue: refused by the
// handler, it comes again at the next login. Both ways whatsmeow sends
// its acks: after the retry receipt in order, or on goroutines.
func TestRetryResendAfterLostSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		synchronous     bool
		me, contact     string
		first, secondTx string
	}{
		{"SynchronousAck", true, "491702220051", "491702220052", "first", "second"},
		{"AsyncAck", false, "491702220053", "491702220054", "one", "two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startNetwork(t)
			rc := newRetryClient(t, n, tc.me, tc.synchronous)
			if _, err := n.SendText(tc.contact, tc.me, tc.first); err != nil {
				t.Fatal(err)
			}
			if m := nextEvent(t, rc.got); m.Message.GetConversation() != tc.first || m.RetryCount != 0 {
				t.Fatalf("first message %q, retry count %d", m.Message.GetConversation(), m.RetryCount)
			}
			testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })

			rc.loseSession(t, n, tc.contact)
			rc.refuse.Store(true)
			id, err := n.SendText(tc.contact, tc.me, tc.secondTx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 { // the first copy, and the one re-sent in the old session
				if u := nextEvent(t, rc.lost); u.Info.ID != id {
					t.Fatalf("undecryptable %d: %s, want %s", i+1, u.Info.ID, id)
				}
			}
			m := nextEvent(t, rc.got)
			if m.Info.ID != id || m.Message.GetConversation() != tc.secondTx || m.RetryCount != 2 {
				t.Fatalf("after the retry receipts got %s %q retry count %d, want %s %q retry count 2",
					m.Info.ID, m.Message.GetConversation(), m.RetryCount, id, tc.secondTx)
			}
			settled(t, n, rc.dev)
			if u := n.Unacked(rc.dev); u != 1 {
				t.Fatalf("%d unacknowledged after the re-sent copy was refused, want 1: an ack of an unreadable copy dropped it", u)
			}

			rc.refuse.Store(false)
			rc.reconnect(t)
			if m := nextEvent(t, rc.got); m.Info.ID != id || m.Message.GetConversation() != tc.secondTx || m.RetryCount != 2 {
				t.Fatalf("after the next login got %s %q retry count %d", m.Info.ID, m.Message.GetConversation(), m.RetryCount)
			}
			testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })
			if len(rc.lost) != 0 {
				t.Errorf("%d more undecryptable copies", len(rc.lost))
			}
		})
	}
}

// TestRetryResendCountAndBound: each retry receipt gets the message again
// with the receipt's count on <enc count> (whatsmeow's RetryCount), the
// re-sent stanza in the place of the queued one; at whatsmeow's bound
// (count 5), and after four re-sends of a message, the phone gives up.
// Only the delivery receipt takes the message off the queue.
func TestRetryResendCountAndBound(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220055", "491702220056"
	n := startNetwork(t)
	rc := newRetryClient(t, n, me, true)
	rc.refuse.Store(true)

	id, err := n.SendText(contact, me, "count me")
	if err != nil {
		t.Fatal(err)
	}
	if m := nextEvent(t, rc.got); m.Info.ID != id || m.RetryCount != 0 {
		t.Fatalf("first delivery %s retry count %d", m.Info.ID, m.RetryCount)
	}
	var sent int
	retry := func(count int) {
		t.Helper()
		// A retry receipt as whatsmeow sends it (retry.go sendRetryReceipt),
		// without keys and without the ack that follows it.
		node := waBinary.Node{
			Tag:   "receipt",
			Attrs: waBinary.Attrs{"id": id, "to": types.NewJID(contact, types.DefaultUserServer), "type": "retry"},
			Content: []waBinary.Node{
				{Tag: "retry", Attrs: waBinary.Attrs{"count": strconv.Itoa(count), "id": id, "t": strconv.FormatInt(time.Now().Unix(), 10), "v": "1"}},
				{Tag: "registration", Content: []byte{0, 0, 0, 1}},
			},
		}
		if err := rc.cli.DangerousInternals().SendNode(context.Background(), node); err != nil {
			t.Fatal(err)
		}
		sent++
		// The network records the receipt after it has sent the copy.
		testclient.Until(t, 10*time.Second, "the retry receipts of the message", func() bool {
			var retries int
			for _, r := range n.ReceiptsFor(contact) {
				if r.Type == types.ReceiptTypeRetry && slices.Contains(r.MessageIDs, id) {
					retries++
				}
			}
			return retries == sent
		})
	}
	// Count 1 in the old session, 2 from a new one built from the device's
	// uploaded prekeys (asked twice without keys), then in that one.
	for count := 1; count <= 4; count++ {
		retry(count)
		m := nextEvent(t, rc.got)
		if m.Info.ID != id || m.Message.GetConversation() != "count me" || m.RetryCount != count {
			t.Fatalf("re-send for count %d: %s %q retry count %d", count, m.Info.ID, m.Message.GetConversation(), m.RetryCount)
		}
		if u := n.Unacked(rc.dev); u != 1 {
			t.Fatalf("%d queued after re-send %d, want 1 (the re-sent copy in the place of the first)", u, count)
		}
	}
	retry(5) // whatsmeow never asks with 5; a phone would not answer it
	retry(1) // a fifth re-send of the same message
	rc.refuse.Store(false)
	marker, err := n.SendText(contact, me, "marker")
	if err != nil {
		t.Fatal(err)
	}
	if m := nextEvent(t, rc.got); m.Info.ID != marker {
		t.Fatalf("got %s retry count %d before the marker: a re-send past the bound", m.Info.ID, m.RetryCount)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 1`, func() bool { return n.Unacked(rc.dev) == 1 })

	rc.reconnect(t)
	if m := nextEvent(t, rc.got); m.Info.ID != id || m.RetryCount != 4 {
		t.Fatalf("after the next login got %s retry count %d, want the last re-send of %s", m.Info.ID, m.RetryCount, id)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })
}

// TestRetryResendGroup: a group message whose pairwise copy (the sender
// key distribution) the device cannot decrypt is sent again as whatsmeow's
// sender does, pairwise with the sender key inside, to the group.
func TestRetryResendGroup(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220057", "491702220058"
	n := startNetwork(t)
	rc := newRetryClient(t, n, me, true)
	g, err := rc.cli.CreateGroup(context.Background(), whatsmeow.ReqCreateGroup{
		Name: "Retries", Participants: []types.JID{types.NewJID(contact, types.DefaultUserServer)},
	})
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }
	if _, err := n.SendGroupMessage(contact, g.JID, text("before"), false); err != nil {
		t.Fatal(err)
	}
	// whatsmeow reports the pairwise copy that carries only the sender key
	// as a message of its own.
	next := func() *events.Message {
		t.Helper()
		for {
			if m := nextEvent(t, rc.got); m.Message.GetConversation() != "" {
				return m
			}
		}
	}
	if m := next(); m.Message.GetConversation() != "before" || m.Info.Chat != g.JID {
		t.Fatalf("first group message %q in %s", m.Message.GetConversation(), m.Info.Chat)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })

	rc.loseSession(t, n, contact)
	id, err := n.SendGroupMessage(contact, g.JID, text("after"), false)
	if err != nil {
		t.Fatal(err)
	}
	m := next()
	if m.Info.ID != id || m.Info.Chat != g.JID || !m.Info.IsGroup || m.Message.GetConversation() != "after" || m.RetryCount != 2 {
		t.Fatalf("group re-send: %s in %s %q retry count %d", m.Info.ID, m.Info.Chat, m.Message.GetConversation(), m.RetryCount)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })
}

// TestRetryRelayBetweenClients: a retry receipt for a message another
// client sent goes to that client's device, as WhatsApp's server passes
// it on, and the client's answer (one <enc count> for the asking device)
// reaches the device, which reads the message with whatsmeow's RetryCount.
// Also when the sender's process restarted in between: the new client of
// the same device answers from whatsmeow's retry store. Before, the
// network answered only for its own phones and the message stayed lost.
func TestRetryRelayBetweenClients(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		restart  bool
		from, to string
		text     string
	}{
		{"SameProcess", false, "491702220061", "491702220062", "spoilt once"},
		{"AfterRestart", true, "491702220063", "491702220064", "asked after the restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := startNetwork(t)
			sender := newRetryClient(t, n, tc.from, true)
			sender.cli.UseRetryMessageStore = true
			rc := newRetryClient(t, n, tc.to, true)
			ctx := context.Background()
			if tc.restart {
				settled(t, n, rc.dev)
				rc.cli.Disconnect()
			}
			n.CorruptNextCopies(rc.dev, 1)
			resp, err := sender.cli.SendMessage(ctx, types.NewJID(tc.to, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.restart {
				// A new process: a new client of the same device, read
				// from the store; nothing of the first one's memory.
				settled(t, n, sender.dev)
				sender.cli.Disconnect()
				dev, err := sender.cli.Store.Container.(*sqlstore.Container).GetDevice(ctx, sender.dev)
				if err != nil || dev == nil {
					t.Fatalf("read the device from the store: %v", err)
				}
				again := whatsmeow.NewClient(dev, waLog.Noop)
				again.UseRetryMessageStore = true
				n.Point(again)
				connected := make(chan struct{}, 1)
				again.AddEventHandler(func(evt any) {
					if _, ok := evt.(*events.Connected); ok {
						connected <- struct{}{}
					}
				})
				if err := again.Connect(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					settled(t, n, sender.dev)
					again.Disconnect()
				})
				nextEvent(t, connected)
				if err := rc.cli.Connect(); err != nil {
					t.Fatal(err)
				}
			}
			if u := nextEvent(t, rc.lost); u.Info.ID != resp.ID {
				t.Fatalf("undecryptable %s, want %s", u.Info.ID, resp.ID)
			}
			m := nextEvent(t, rc.got)
			if m.Info.ID != resp.ID || m.Message.GetConversation() != tc.text || m.RetryCount != 1 {
				t.Fatalf("after the retry receipt got %s %q retry count %d, want %s %q retry count 1",
					m.Info.ID, m.Message.GetConversation(), m.RetryCount, resp.ID, tc.text)
			}
			testclient.Until(t, 10*time.Second, `n.Unacked(rc.dev) == 0`, func() bool { return n.Unacked(rc.dev) == 0 })
		})
	}
}
