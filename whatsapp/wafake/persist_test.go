package wafake_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// restartLog records what a client hears across a network's restart.
type restartLog struct{ ch chan any }

func recordRestart(cli *whatsmeow.Client) *restartLog {
	l := &restartLog{ch: make(chan any, 256)}
	cli.AddEventHandler(func(evt any) {
		if m, ok := evt.(*events.Message); ok && m.Message.GetProtocolMessage() != nil {
			return
		}
		switch evt.(type) {
		case *events.PairSuccess, *events.Connected, *events.LoggedOut, *events.ConnectFailure,
			*events.Message, *events.UndecryptableMessage:
			select {
			case l.ch <- evt:
			default:
			}
		}
	})
	return l
}

// next returns the next event of type T; any other event of the kinds a
// restart must not bring (pairing, logout, undecryptable messages) fails.
func nextOf[T any](t *testing.T, l *restartLog) T {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case evt := <-l.ch:
			if e, ok := evt.(T); ok {
				return e
			}
			switch evt.(type) {
			case *events.PairSuccess, *events.LoggedOut, *events.ConnectFailure, *events.UndecryptableMessage:
				t.Fatalf("%T%+v while waiting for %T", evt, evt, *new(T))
			}
		case <-timeout:
			t.Fatalf("no %T within 15 s", *new(T))
		}
	}
}

func startKept(t *testing.T, dir string) *wafake.Network {
	t.Helper()
	n, err := wafake.New(wafake.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// TestStateSurvivesRestart: a network with a state directory is closed and
// a new one started on the directory. The linked client logs in again
// with its keys, without pairing; a contact's message decrypts on it, its
// message to the contact and to a group decrypt on the phones (the
// Signal sessions and sender keys of both sides carried on); accounts,
// inboxes, groups and invite codes are the same.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	const me, contact = "491701230001", "491701230002"
	dir := t.TempDir()
	ctx := context.Background()
	first := startKept(t, dir)
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	rec := recordRestart(cli)
	ps, err := link(first, cli, me)
	if err != nil {
		t.Fatal(err)
	}
	nextOf[*events.PairSuccess](t, rec)
	nextOf[*events.Connected](t, rec)
	defer cli.Disconnect()

	// Before: both ways, and a group with an invite code.
	id, err := first.SendText(contact, me, "before the restart")
	if err != nil {
		t.Fatal(err)
	}
	if m := nextOf[*events.Message](t, rec); m.Info.ID != id || m.Message.GetConversation() != "before the restart" {
		t.Fatalf("client got %s %q before the restart", m.Info.ID, m.Message.GetConversation())
	}
	sent, err := cli.SendMessage(ctx, pn(contact), &waE2E.Message{Conversation: proto.String("answer before")})
	if err != nil {
		t.Fatal(err)
	}
	waitInbox(t, first, contact, 1)
	group, err := cli.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: "Kept", Participants: []types.JID{pn(contact)}})
	if err != nil {
		t.Fatal(err)
	}
	invite, err := cli.GetGroupInviteLink(ctx, group.JID, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.SendMessage(ctx, group.JID, &waE2E.Message{Conversation: proto.String("group before")}); err != nil {
		t.Fatal(err)
	}
	waitInbox(t, first, contact, 2)
	picture := []byte("\xff\xd8\xff\xe0 not much of a JPEG, but the network's media host keeps any bytes")
	imgID, err := first.SendImage(contact, me, picture, "image/jpeg", "kept")
	if err != nil {
		t.Fatal(err)
	}
	img := nextOf[*events.Message](t, rec)
	if img.Info.ID != imgID || img.Message.GetImageMessage() == nil {
		t.Fatalf("client got %s %+v, want the image %s", img.Info.ID, img.Message, imgID)
	}
	wantGroup := viewOf(t, first, group.JID)
	wantMe, _ := first.Account(me)
	settle(t, first, ps.ID)
	quiesce(first, ps.ID)
	cli.Disconnect()
	// Sent while the device is offline: the network's queue keeps it.
	queuedID, err := first.SendText(contact, me, "queued while offline")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "network.json")); err != nil {
		t.Fatalf("no state written at Close: %v", err)
	}

	second := startKept(t, dir)
	if got := viewOf(t, second, group.JID); got.Subject != "Kept" || got.InviteCode != wantGroup.InviteCode || len(got.Participants) != 2 ||
		roles(got)[me] != wafake.RoleSuperAdmin || roles(got)[contact] != wafake.RoleMember {
		t.Errorf("group after the restart %+v, want %+v", got, wantGroup)
	}
	if got, _ := second.Account(me); got.LID != wantMe.LID || len(got.LinkedDevices) != 1 || got.LinkedDevices[0] != ps.ID {
		t.Errorf("account after the restart %+v, want %+v", got, wantMe)
	}
	if in := second.Inbox(contact); len(in) != 2 || in[0].ID != sent.ID || in[0].Message.GetConversation() != "answer before" ||
		in[1].Chat != group.JID || in[1].Message.GetConversation() != "group before" {
		t.Errorf("the contact's inbox after the restart: %+v", in)
	}

	second.Point(cli)
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	// The queued text and Connected come in either order: whatsmeow
	// handles the offline replay beside its post-login work.
	var queuedMsg *events.Message
	for connected := false; !connected || queuedMsg == nil; {
		switch e := nextOf[any](t, rec).(type) {
		case *events.Connected:
			connected = true
		case *events.Message:
			if queuedMsg != nil {
				t.Fatalf("a second message %s after the restart", e.Info.ID)
			}
			queuedMsg = e
		case *events.PairSuccess, *events.LoggedOut, *events.ConnectFailure, *events.UndecryptableMessage:
			t.Fatalf("%T%+v after the restart", e, e)
		}
	}
	if queuedMsg.Info.ID != queuedID || queuedMsg.Message.GetConversation() != "queued while offline" {
		t.Errorf("client got %s %q first after the restart, want the queued %s", queuedMsg.Info.ID, queuedMsg.Message.GetConversation(), queuedID)
	}
	if got, err := cli.Download(ctx, img.Message.GetImageMessage()); err != nil || string(got) != string(picture) {
		t.Errorf("the image after the restart: %q (%v), want the one sent before", got, err)
	}
	id, err = second.SendText(contact, me, "after the restart")
	if err != nil {
		t.Fatal(err)
	}
	if m := nextOf[*events.Message](t, rec); m.Info.ID != id || m.Message.GetConversation() != "after the restart" {
		t.Errorf("client got %s %q after the restart", m.Info.ID, m.Message.GetConversation())
	}
	sent, err = cli.SendMessage(ctx, pn(contact), &waE2E.Message{Conversation: proto.String("answer after")})
	if err != nil {
		t.Fatal(err)
	}
	if in := waitInbox(t, second, contact, 3); in[2].ID != sent.ID || in[2].Message.GetConversation() != "answer after" {
		t.Errorf("the contact decrypted %+v", in[2])
	}
	gsent, err := cli.SendMessage(ctx, group.JID, &waE2E.Message{Conversation: proto.String("group after")})
	if err != nil {
		t.Fatal(err)
	}
	if in := waitInbox(t, second, contact, 4); in[3].ID != gsent.ID || in[3].Chat != group.JID || in[3].Message.GetConversation() != "group after" {
		t.Errorf("the contact decrypted %+v in the group", in[3])
	}
	info, err := cli.GetGroupInfoFromLink(ctx, invite)
	if err != nil || info.JID != group.JID {
		t.Errorf("the invite link after the restart names %v (%v), want %s", info, err, group.JID)
	}
	settle(t, second, ps.ID)
	quiesce(second, ps.ID)
}

// TestResetNetworkRefusesUnknownDevice: a device the network never knew —
// its state was deleted, or it kept none — is refused with the reset
// failure, not WhatsApp's 401; a device it removed still gets the 401.
func TestResetNetworkRefusesUnknownDevice(t *testing.T) {
	t.Parallel()
	for _, kept := range []bool{true, false} {
		name := "without state"
		if kept {
			name = "state deleted"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			first := startKept(t, dir)
			cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
			rec := recordRestart(cli)
			ps, err := link(first, cli, "491701230003")
			if err != nil {
				t.Fatal(err)
			}
			nextOf[*events.PairSuccess](t, rec)
			nextOf[*events.Connected](t, rec)
			settle(t, first, ps.ID)
			quiesce(first, ps.ID)
			cli.Disconnect()
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			opts := wafake.Options{}
			if kept {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				opts.StateDir = dir
			}
			second, err := wafake.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			second.Point(cli)
			if err := cli.Connect(); err != nil {
				t.Fatal(err)
			}
			fail := nextOf[*events.ConnectFailure](t, rec)
			if fail.Reason != wafake.ResetFailureReason || fail.Message != wafake.ResetFailureMessage {
				t.Errorf("refused with %d %q, want %d %q", fail.Reason, fail.Message, wafake.ResetFailureReason, wafake.ResetFailureMessage)
			}
		})
	}
}
