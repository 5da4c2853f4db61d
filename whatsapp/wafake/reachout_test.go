package wafake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// TestReachoutTimelock: the network puts an account under a reach-out
// timelock as WhatsApp does: its linked devices get the mex notification
// whatsmeow emits as NotifyAccountReachoutTimelock (active, with its end;
// then lifted), and while it lasts a message to a contact new to the
// account — one it never exchanged a message with, either way — is acked
// with error 463 (whatsmeow's ErrServerReturnedError) and reaches nobody;
// contacts it wrote to, or that wrote to it, are still reached.
func TestReachoutTimelock(t *testing.T) {
	t.Parallel()
	const me, wrote, wroteMe, stranger = "491702220071", "491702220072", "491702220073", "491702220074"
	n := startNetwork(t)
	cli, _ := linkByQR(t, n, me)
	notes := make(chan *events.NotifyAccountReachoutTimelock, 4)
	cli.AddEventHandler(func(evt any) {
		if e, ok := evt.(*events.NotifyAccountReachoutTimelock); ok {
			notes <- e
		}
	})
	ctx := context.Background()
	send := func(to string) (string, error) {
		resp, err := cli.SendMessage(ctx, types.NewJID(to, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String("hi " + to)})
		return resp.ID, err
	}
	if _, err := send(wrote); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SendText(wroteMe, me, "I write first"); err != nil {
		t.Fatal(err)
	}

	if err := n.ReachoutTimelock(me, time.Hour); err != nil {
		t.Fatal(err)
	}
	on := nextEvent(t, notes)
	if !on.IsActive || on.EnforcementType == "" || on.TimeEnforcementEnds.Before(time.Now().Add(59*time.Minute)) || on.TimeEnforcementEnds.After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("notification %+v, want active, ending in an hour", on)
	}
	_, err := send(stranger)
	if !errors.Is(err, whatsmeow.ErrServerReturnedError) || !strings.HasSuffix(err.Error(), " 463") {
		t.Fatalf("send to a new contact: %v, want the server's error 463", err)
	}
	for _, to := range []string{wrote, wroteMe} {
		if _, err := send(to); err != nil {
			t.Errorf("send to %s, not new to the account: %v", to, err)
		}
	}

	if err := n.ReachoutTimelock(me, 0); err != nil {
		t.Fatal(err)
	}
	if off := nextEvent(t, notes); off.IsActive {
		t.Fatalf("notification %+v after lifting, want inactive", off)
	}
	id, err := send(stranger)
	if err != nil {
		t.Fatalf("send to the new contact after lifting: %v", err)
	}
	var got int
	for _, r := range n.Inbox(stranger) {
		if r.From.User == me {
			got++
			if r.ID != id {
				t.Errorf("%s received %s, want only %s (the refused send reached it)", stranger, r.ID, id)
			}
		}
	}
	if got != 1 {
		t.Errorf("%s received %d messages from %s, want 1", stranger, got, me)
	}
	if err := n.ReachoutTimelock(me, -time.Second); err == nil {
		t.Error("a negative timelock was accepted")
	}
}
