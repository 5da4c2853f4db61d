package wafake_test

import (
	"context"
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestCallStages: each call stanza the network sends is the whatsmeow event
// of its stage, with the call id, the caller by number and the creator by
// LID with its number.
func TestCallStages(t *testing.T) {
	t.Parallel()
	const contact = "491702220021"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, "491702220022")
	got := eventsWhere(cli, func(evt any) bool {
		switch evt.(type) {
		case *events.CallOffer, *events.CallOfferNotice, *events.CallAccept, *events.CallPreAccept,
			*events.CallTransport, *events.CallTerminate, *events.CallReject, *events.CallRelayLatency:
			return true
		}
		return false
	})
	contactJID := types.NewJID(contact, types.DefaultUserServer)
	group := types.NewJID("120363000000000001", types.GroupServer)
	for _, stage := range wafake.CallStages {
		s := wafake.CallStanza{Stage: stage, Video: true, Group: group, Reason: "timeout"}
		id, err := n.Call(contact, ps.ID.ToNonAD(), s)
		if err != nil {
			t.Fatal(err)
		}
		var meta types.BasicCallMeta
		switch e := nextEvent(t, got).(type) {
		case *events.CallOffer:
			meta = e.BasicCallMeta
			if _, video := e.Data.GetOptionalChildByTag("video"); stage != "offer" || !video {
				t.Errorf("%s: a video offer %v", stage, e.Data)
			}
		case *events.CallOfferNotice:
			meta = e.BasicCallMeta
			if stage != "offer_notice" || e.Media != "video" || e.Type != "group" {
				t.Errorf("%s: offer notice %+v", stage, e)
			}
		case *events.CallTerminate:
			meta = e.BasicCallMeta
			if stage != "terminate" || e.Reason != "timeout" {
				t.Errorf("%s: terminate %+v", stage, e)
			}
		case *events.CallAccept:
			meta = e.BasicCallMeta
		case *events.CallPreAccept:
			meta = e.BasicCallMeta
		case *events.CallTransport:
			meta = e.BasicCallMeta
		case *events.CallReject:
			meta = e.BasicCallMeta
		case *events.CallRelayLatency:
			meta = e.BasicCallMeta
		}
		acct, _ := n.Account(contact)
		if meta.CallID != id || meta.From != contactJID || meta.CallCreator != acct.LID || meta.CallCreatorAlt != contactJID || meta.GroupJID != group {
			t.Errorf("%s: call %+v, want %s from %s (creator %s)", stage, meta, id, contactJID, acct.LID)
		}
	}
	if _, err := n.Call(contact, ps.ID.ToNonAD(), wafake.CallStanza{Stage: "ring"}); err == nil {
		t.Error("an unknown call stage was sent")
	}
}

// TestContactAddressing: a message by LID comes from the LID with the
// number alongside; a group message reaches the members' linked devices
// in either addressing mode, the sender's other address alongside; an
// undecryptable one is whatsmeow's UndecryptableMessage.
func TestContactAddressing(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220023", "491702220024"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, me)
	// A group message comes as two: the pairwise copy of the sender key,
	// then the message under it.
	msgs := eventsWhere(cli, func(m *events.Message) bool {
		return !m.Info.IsFromMe && m.Message.GetSenderKeyDistributionMessage() == nil
	})
	lost := eventsOf[*events.UndecryptableMessage](cli)
	contactJID := types.NewJID(contact, types.DefaultUserServer)
	text := func(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }

	id, err := n.SendMessageByLID(contact, me, text("by LID"))
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := n.Account(contact)
	if m := nextEvent(t, msgs); m.Info.ID != id || m.Info.Sender != acct.LID || m.Info.SenderAlt != contactJID || m.Message.GetConversation() != "by LID" {
		t.Errorf("message by LID %+v", m.Info)
	}

	g, err := cli.CreateGroup(context.Background(), whatsmeow.ReqCreateGroup{Name: "Addressing", Participants: []types.JID{contactJID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, byLID := range []bool{false, true} {
		id, err := n.SendGroupMessage(contact, g.JID, text("hello group"), byLID)
		if err != nil {
			t.Fatal(err)
		}
		m := nextEvent(t, msgs)
		sender, alt := contactJID, acct.LID
		if byLID {
			sender, alt = acct.LID, contactJID
		}
		if m.Info.ID != id || m.Info.Chat != g.JID || !m.Info.IsGroup || m.Info.Sender != sender || m.Info.SenderAlt != alt || m.Message.GetConversation() != "hello group" {
			t.Errorf("group message (by LID %v): %+v %q", byLID, m.Info, m.Message.GetConversation())
		}
	}
	if _, err := n.SendGroupMessage("491702220025", g.JID, text("not a member"), false); err == nil {
		t.Error("a non-member sent to the group")
	}

	id, err = n.SendUndecryptable(contact, me)
	if err != nil {
		t.Fatal(err)
	}
	if u := nextEvent(t, lost); u.Info.ID != id || u.Info.Sender.ToNonAD() != contactJID {
		t.Errorf("undecryptable %+v", u.Info)
	}
}

// TestPollVote: a phone's poll carries its secret; its vote decrypts on
// the device with whatsmeow's DecryptPollVote to the hashes of the chosen
// options.
func TestPollVote(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220026", "491702220027"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, me)
	msgs := contactMessages(cli)
	pollID, err := n.SendPoll(contact, me, "Lunch?", []string{"pizza", "sushi"})
	if err != nil {
		t.Fatal(err)
	}
	if p := nextEvent(t, msgs); p.Info.ID != pollID || p.Message.GetPollCreationMessage().GetName() != "Lunch?" {
		t.Fatalf("poll %+v", p)
	}
	voteID, err := n.VotePoll(pollID, me, []string{"sushi"})
	if err != nil {
		t.Fatal(err)
	}
	v := nextEvent(t, msgs)
	if v.Info.ID != voteID || v.Message.GetPollUpdateMessage().GetPollCreationMessageKey().GetID() != pollID {
		t.Fatalf("vote %+v", v)
	}
	vote, err := cli.DecryptPollVote(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256([]byte("sushi"))
	if got := vote.GetSelectedOptions(); len(got) != 1 || !slices.Equal(got[0], want[:]) {
		t.Errorf("selected %x, want sha256(sushi)", got)
	}
	if _, err := n.VotePoll("3EB0NOPOLL", me, nil); err == nil {
		t.Error("a vote in an unknown poll was sent")
	}
}

// TestOfflinePreview: a device logging in with stanzas waiting is told
// their number first (OfflineSyncPreview), then gets them, then
// OfflineSyncCompleted.
func TestOfflinePreview(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220028", "491702220029"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, me)
	previews := eventsOf[*events.OfflineSyncPreview](cli)
	completed := eventsOf[*events.OfflineSyncCompleted](cli)
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
	cli.Disconnect()
	for range 2 {
		if _, err := n.SendText(contact, me, "queued"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.Call(contact, ps.ID.ToNonAD(), wafake.CallStanza{Stage: "offer"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	if p := nextEvent(t, previews); p.Total != 3 || p.Messages != 2 {
		t.Errorf("preview %+v, want 3 stanzas of which 2 messages", p)
	}
	if c := nextEvent(t, completed); c.Count != 3 {
		t.Errorf("completed %+v, want 3", c)
	}
}

// TestSharePhoneNumber: a contact writing under its LID shares its number:
// a protocol message SHARE_PHONE_NUMBER from its LID, its number alongside.
func TestSharePhoneNumber(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220026", "491702220027"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, me)
	msgs := contactMessages(cli)
	id, err := n.SharePhoneNumber(contact, me)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := n.Account(contact)
	m := nextEvent(t, msgs)
	if m.Info.ID != id || m.Info.Sender != acct.LID || m.Info.SenderAlt != pn(contact) ||
		m.Message.GetProtocolMessage().GetType() != waE2E.ProtocolMessage_SHARE_PHONE_NUMBER {
		t.Errorf("share %+v %v", m.Info, m.Message)
	}
	if _, err := n.SharePhoneNumber(contact, "491702220028"); err == nil {
		t.Error("a share reached an account without linked devices")
	}
}
