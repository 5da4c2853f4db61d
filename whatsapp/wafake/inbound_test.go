package wafake_test

import (
	"context"
	"errors"
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

// contactMessages collects the messages of other accounts; the phone's own
// (such as the app state key share after linking) are left out.
func contactMessages(cli *whatsmeow.Client) <-chan *events.Message {
	return eventsWhere(cli, func(m *events.Message) bool { return !m.Info.IsFromMe })
}

func TestInboundReceipts(t *testing.T) {
	t.Parallel()
	const contact = "491702220001"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, "491702220002")
	receipts := eventsOf[*events.Receipt](cli)
	ctx := context.Background()
	contactJID := types.NewJID(contact, types.DefaultUserServer)
	var ids []string
	for _, text := range []string{"one", "two"} {
		resp, err := cli.SendMessage(ctx, contactJID, &waE2E.Message{Conversation: proto.String(text)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.ID)
	}
	waitInbox(t, n, contact, 2)

	if err := n.SendReceipt(contact, ps.ID.ToNonAD(), ids, "delivered"); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, receipts)
	if e.Type != types.ReceiptTypeDelivered || !slices.Equal(e.MessageIDs, ids) || e.Chat != contactJID || e.Sender != contactJID || e.IsFromMe {
		t.Errorf("delivered receipt %+v, want both ids from %s", e, contact)
	}
	for _, typ := range []string{"read", "played"} {
		// Receipts are queued like messages, under their first message id,
		// and the client's ack releases them: wait for it, so that the two
		// receipts for the same message are not in the queue at once.
		testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
		if err := n.SendReceipt(contact, ps.ID, ids[1:], typ); err != nil {
			t.Fatal(err)
		}
		if e := nextEvent(t, receipts); string(e.Type) != typ || !slices.Equal(e.MessageIDs, ids[1:]) {
			t.Errorf("%s receipt %+v", typ, e)
		}
	}
	if err := n.SendReceipt(contact, ps.ID, ids, "seen"); err == nil {
		t.Error("an unknown receipt type was sent")
	}
}

func TestPresenceAndChatState(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220003", "491702220004"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, me)
	contactCli, _ := linkSettled(t, n, contact)
	presence := eventsOf[*events.Presence](cli)
	chatState := eventsOf[*events.ChatPresence](cli)
	ctx := context.Background()
	contactJID := types.NewJID(contact, types.DefaultUserServer)

	// WhatsApp sends availability only to subscribers.
	if err := n.SendPresence(contact, ps.ID.ToNonAD(), "available"); !errors.Is(err, wafake.ErrNoSubscriber) {
		t.Fatalf("presence before subscribing: %v, want ErrNoSubscriber", err)
	}
	noEvent(t, presence)
	if err := cli.SubscribePresence(ctx, contactJID); err != nil {
		t.Fatal(err)
	}
	// On subscribing, the network tells the contact's current presence.
	if e := nextEvent(t, presence); e.From != contactJID || e.Unavailable {
		t.Errorf("presence on subscribing %+v, want %s available", e, contact)
	}

	if err := n.SendPresence(contact, ps.ID.ToNonAD(), "unavailable"); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, presence); e.From != contactJID || !e.Unavailable || time.Since(e.LastSeen) > time.Minute {
		t.Errorf("unavailable presence %+v, want a recent last seen", e)
	}

	// A linked client of the contact going online reaches the subscriber.
	contactCli.Store.PushName = "Bob"
	if err := contactCli.SendPresence(ctx, types.PresenceAvailable); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, presence); e.From != contactJID || e.Unavailable {
		t.Errorf("relayed presence %+v", e)
	}
	if acct, _ := n.Account(contact); acct.PushName != "Bob" {
		t.Errorf("push name %q from the presence, want Bob", acct.PushName)
	}

	for _, state := range []string{"composing", "recording", "paused"} {
		if err := n.SendPresence(contact, ps.ID.ToNonAD(), state); err != nil {
			t.Fatal(err)
		}
		e := nextEvent(t, chatState)
		wantState, wantMedia := types.ChatPresenceComposing, types.ChatPresenceMediaText
		switch state {
		case "recording":
			wantMedia = types.ChatPresenceMediaAudio
		case "paused":
			wantState = types.ChatPresencePaused
		}
		if e.Chat != contactJID || e.Sender != contactJID || e.State != wantState || e.Media != wantMedia {
			t.Errorf("%s: chat presence %+v", state, e)
		}
	}
	if err := n.SendPresence(contact, ps.ID, "typing"); err == nil {
		t.Error("an unknown presence state was sent")
	}
}

func TestReactionFromContact(t *testing.T) {
	t.Parallel()
	const contact = "491702220005"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, "491702220006")
	msgs := contactMessages(cli)
	resp, err := cli.SendMessage(context.Background(), types.NewJID(contact, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String("nice?")})
	if err != nil {
		t.Fatal(err)
	}
	waitInbox(t, n, contact, 1)
	id, err := n.SendReaction(contact, ps.ID.User, resp.ID, "👍")
	if err != nil {
		t.Fatal(err)
	}
	m := nextEvent(t, msgs)
	r := m.Message.GetReactionMessage()
	if m.Info.ID != id || r.GetText() != "👍" || r.GetKey().GetID() != resp.ID || r.GetKey().GetFromMe() || m.Info.Sender.User != contact {
		t.Errorf("reaction %+v %+v, want 👍 on %s from %s", m.Info, r, resp.ID, contact)
	}
}

func TestCallOffer(t *testing.T) {
	t.Parallel()
	const contact = "491702220007"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, "491702220008")
	calls := eventsOf[*events.CallOffer](cli)
	callID, err := n.CallOffer(contact, ps.ID.ToNonAD())
	if err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, calls)
	contactJID := types.NewJID(contact, types.DefaultUserServer)
	if e.CallID != callID || e.From != contactJID || e.CallCreator != contactJID || e.RemotePlatform == "" {
		t.Errorf("call offer %+v, want call %s from %s", e.BasicCallMeta, callID, contact)
	}
	// A device that was offline gets the offer when it logs in, as from
	// WhatsApp's offline queue.
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
	cli.Disconnect()
	callID, err = n.CallOffer(contact, ps.ID.ToNonAD())
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, calls); e.CallID != callID {
		t.Errorf("after logging in got call %s, want %s", e.CallID, callID)
	}
}

func TestPictureChangeOfContact(t *testing.T) {
	t.Parallel()
	const contact = "491702220009"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, "491702220010")
	pictures := eventsOf[*events.Picture](cli)
	jpeg := fakeJPEG(t)
	id, err := n.SetPicture(contact, jpeg)
	if err != nil {
		t.Fatal(err)
	}
	contactJID := types.NewJID(contact, types.DefaultUserServer)
	if e := nextEvent(t, pictures); e.JID != contactJID || e.PictureID != id || e.Remove {
		t.Errorf("picture event %+v, want %s set to %s", e, contact, id)
	}
	info, err := cli.GetProfilePictureInfo(context.Background(), contactJID, nil)
	if err != nil || info.ID != id {
		t.Errorf("picture info %+v (%v), want id %s", info, err, id)
	}
	if _, err := n.SetPicture(contact, []byte("not a jpeg")); err == nil {
		t.Error("a non-JPEG picture was accepted")
	}
}

func TestReadReceiptsRecorded(t *testing.T) {
	t.Parallel()
	const contact = "491702220011"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, "491702220012")
	msgs := contactMessages(cli)
	ctx := context.Background()
	read := func(typ types.ReceiptType) {
		t.Helper()
		id, err := n.SendText(contact, ps.ID.User, "read me")
		if err != nil {
			t.Fatal(err)
		}
		m := nextEvent(t, msgs)
		if err := cli.MarkRead(ctx, []types.MessageID{m.Info.ID}, time.Now(), m.Info.Chat, m.Info.Sender); err != nil {
			t.Fatal(err)
		}
		var got []wafake.ReceiptInfo
		testclient.Until(t, 10*time.Second, "the receipts of the message", func() bool {
			got = nil
			for _, r := range n.ReceiptsFor(contact) {
				if slices.Contains(r.MessageIDs, id) {
					got = append(got, r)
				}
			}
			return len(got) == 2
		})
		// The delivery receipt the client sends on its own (after its event
		// handlers, so in either order) and MarkRead's.
		var kinds []types.ReceiptType
		for _, r := range got {
			kinds = append(kinds, r.Type)
			if r.From != ps.ID || r.Chat != ps.ID.ToNonAD() {
				t.Errorf("receipt %+v, want from %s in the chat with it", r, ps.ID)
			}
		}
		if !slices.Contains(kinds, typ) || !slices.Contains(kinds, types.ReceiptTypeInactive) {
			t.Errorf("receipts for %s: %v, want %q and the delivery (inactive: the client is not marked online)", id, kinds, typ)
		}
	}
	read(types.ReceiptTypeRead)
	// With read receipts off, whatsmeow sends read-self, which WhatsApp does
	// not show the sender.
	if _, err := cli.SetPrivacySetting(ctx, types.PrivacySettingTypeReadReceipts, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	read(types.ReceiptTypeReadSelf)
}

// TestGroupReceipt: a member's receipt for the account's message in a group
// reaches the account's devices from the group, naming the member; a
// non-member's, or one for an account not in the group, is refused.
func TestGroupReceipt(t *testing.T) {
	t.Parallel()
	const me, member, outsider = "491702220031", "491702220032", "491702220033"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, me)
	receipts := eventsOf[*events.Receipt](cli)
	g, err := n.CreateGroup(member, "Receipts", me)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SendGroupReceipt(member, g, ps.ID.ToNonAD(), []string{"3EB0G1", "3EB0G2"}, "read"); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, receipts)
	if e.Type != types.ReceiptTypeRead || !slices.Equal(e.MessageIDs, []string{"3EB0G1", "3EB0G2"}) || e.Chat != g || !e.IsGroup ||
		e.Sender.ToNonAD() != types.NewJID(member, types.DefaultUserServer) || e.IsFromMe {
		t.Errorf("group receipt %+v", e)
	}
	if err := n.SendGroupReceipt(outsider, g, ps.ID.ToNonAD(), []string{"3EB0G1"}, "read"); err == nil {
		t.Error("a non-member's receipt was sent")
	}
	other, err := n.CreateGroup(member, "Without me", outsider)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SendGroupReceipt(member, other, ps.ID.ToNonAD(), []string{"3EB0G1"}, "read"); err == nil {
		t.Error("a receipt reached an account outside the group")
	}
	if err := n.SendGroupReceipt(member, g, ps.ID.ToNonAD(), []string{"3EB0G1"}, "seen"); err == nil {
		t.Error("an unknown receipt type was sent")
	}
}
