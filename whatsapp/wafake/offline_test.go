package wafake_test

import (
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/testclient"
)

// TestOfflineQueue: a message the client did not acknowledge (its handler
// failed, as a gateway's does when it cannot store the event) comes again
// after it reconnects; once acknowledged it never comes again.
func TestOfflineQueue(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	cli.SynchronousAck = true
	cli.EnableDecryptedEventBuffer = true // a re-sent ciphertext decrypts from the buffer

	var refuse atomic.Bool
	refuse.Store(true)
	got := make(chan *events.Message, 8)
	connected := make(chan struct{}, 8)
	cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		switch e := evt.(type) {
		case *events.Message:
			// Decided before the test hears of the message: once it has,
			// it may already be refusing no more.
			ok := !refuse.Load()
			got <- e
			return ok
		case *events.Connected:
			connected <- struct{}{}
		}
		return true
	})
	recv := func() *events.Message {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no message within 10 s")
			return nil
		}
	}
	reconnect := func() {
		t.Helper()
		cli.Disconnect()
		if err := cli.Connect(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-connected:
		case <-time.After(10 * time.Second):
			t.Fatal("no reconnect within 10 s")
		}
	}

	id, err := n.SendText("4915112345678", ps.ID.User, "keep me")
	if err != nil {
		t.Fatal(err)
	}
	if m := recv(); m.Info.ID != id {
		t.Fatalf("first delivery %s, want %s", m.Info.ID, id)
	}
	if u := n.Unacked(ps.ID); u != 1 {
		t.Fatalf("%d unacknowledged after a failed handler, want 1", u)
	}

	refuse.Store(false)
	reconnect()
	if m := recv(); m.Info.ID != id || m.Message.GetConversation() != "keep me" {
		t.Fatalf("after reconnect got %s %q, want %s again", m.Info.ID, m.Message.GetConversation(), id)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })

	reconnect()
	id2, err := n.SendText("4915112345678", ps.ID.User, "only new ones now")
	if err != nil {
		t.Fatal(err)
	}
	if m := recv(); m.Info.ID != id2 {
		t.Fatalf("after an acknowledged delivery and a reconnect got %s, want only the new %s", m.Info.ID, id2)
	}
}
