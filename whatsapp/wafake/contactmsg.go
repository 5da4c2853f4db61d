package wafake

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"go.mau.fi/libsignal/groups"
	"go.mau.fi/libsignal/protocol"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// What contacts send besides SendMessage's plain direct messages: messages
// addressed by LID, messages no device can decrypt, and group messages.

// SendMessageByLID is SendMessage as WhatsApp delivers the messages of a
// contact whose chat moved to LIDs: the stanza comes from the sender's LID,
// with its number in sender_pn (whatsmeow: Info.Sender a LID, SenderAlt
// the number).
func (n *Network) SendMessageByLID(from, to string, msg *waE2E.Message) (string, error) {
	return n.sendDirect(from, to, msg, func(sender *account, attrs waBinary.Attrs) {
		attrs["from"] = types.NewJID(sender.lid, types.HiddenUserServer)
		attrs["sender_pn"] = sender.jid()
		delete(attrs, "sender_lid")
	}, nil)
}

// SharePhoneNumber has the phone of account from, writing to to under its
// LID, share its phone number in their chat: the protocol message WhatsApp
// sends when a contact whose number was hidden reveals it (whatsmeow: a
// message with ProtocolMessage SHARE_PHONE_NUMBER, from the LID with the
// number in sender_pn). It returns the message id.
func (n *Network) SharePhoneNumber(from, to string) (string, error) {
	return n.SendMessageByLID(from, to, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_SHARE_PHONE_NUMBER.Enum(),
	}})
}

// SendUndecryptable has the phone of account from send to the linked
// devices of to a message whose ciphertext no device can decrypt, as after
// a lost Signal session (whatsmeow: events.UndecryptableMessage, and a
// retry receipt back). Its phone does not send it again on that receipt:
// the message stays lost, as one the phone no longer has. It returns the
// message id.
func (n *Network) SendUndecryptable(from, to string) (string, error) {
	return n.sendDirect(from, to, &waE2E.Message{Conversation: proto.String("lost")}, nil, func(enc *waBinary.Node) {
		garbage := make([]byte, 48)
		_, _ = rand.Read(garbage)
		enc.Attrs["type"], enc.Content = "msg", garbage
	})
}

// sendDirect is SendMessage with the stanza's attributes and each device's
// ciphertext open to change.
func (n *Network) sendDirect(from, to string, msg *waE2E.Message, attrs func(*account, waBinary.Attrs), enc func(*waBinary.Node)) (string, error) {
	plain, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	sender, err := n.accountLocked(from)
	var comps []*companion
	if err == nil {
		var recipient *account
		if recipient, err = n.accountLocked(to); err == nil {
			comps = linkedLocked(recipient, nil)
			contactedLocked(sender, recipient)
		}
	}
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	if len(comps) == 0 {
		return "", fmt.Errorf("wafake: account %s has no linked device", to)
	}
	id := newMessageID()
	for _, comp := range comps {
		e, err := n.phoneEncrypt(sender, comp, plain)
		if err != nil {
			return "", err
		}
		if enc != nil {
			enc(&e) // a ciphertext the phone cannot produce again
		}
		a := waBinary.Attrs{
			"id": id, "from": sender.jid(), "sender_lid": types.NewJID(sender.lid, types.HiddenUserServer), "type": messageType(msg),
			"t": strconv.FormatInt(time.Now().Unix(), 10), "notify": "Contact " + from,
		}
		if attrs != nil {
			attrs(sender, a)
		}
		if enc == nil {
			n.rememberSent(comp, sentMessage{id: id, sender: sender, plain: plain, attrs: a, enc: encExtra(e)})
		}
		n.queue(comp, id, waBinary.Node{Tag: "message", Attrs: a, Content: []waBinary.Node{e}})
	}
	return id, nil
}

// SendGroupMessage has the phone of member from send msg to group: the
// linked devices of the other members get it as WhatsApp delivers group
// messages, a pairwise copy of the sender key then the message under it
// (whatsmeow: events.Message with Info.IsGroup). byLID addresses the
// sender as groups that moved to LIDs do (addressing_mode lid, participant
// the LID, participant_pn the number); otherwise by number with
// participant_lid. It returns the message id.
func (n *Network) SendGroupMessage(from string, group types.JID, msg *waE2E.Message, byLID bool) (string, error) {
	plain, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	sender, err := n.accountLocked(from)
	g := n.groups.byID[group.User]
	var comps []*companion
	switch {
	case err != nil:
	case g == nil || group.Server != types.GroupServer:
		err = fmt.Errorf("wafake: no group %s", group)
	case g.role(from) == "":
		err = fmt.Errorf("wafake: %s is not a member of %s", from, group)
	default:
		for _, comp := range n.devicesLocked(g.phones()) {
			if comp.acct != sender {
				comps = append(comps, comp)
			}
		}
	}
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	lid := types.NewJID(sender.lid, types.HiddenUserServer)
	// whatsmeow keys a group sender by its LID whatever the addressing
	// (it takes participant_lid over the number), so the phone does too.
	name := protocol.NewSenderKeyName(group.String(), lid.SignalAddress())
	ctx := context.Background()
	builder := groups.NewGroupSessionBuilder(sender.phoneDev, serializer)
	skdm, err := builder.Create(ctx, name)
	if err != nil {
		return "", fmt.Errorf("wafake: sender key for %s: %w", group, err)
	}
	sk, err := groups.NewGroupCipher(builder, name, sender.phoneDev).Encrypt(ctx, padded(plain))
	if err != nil {
		return "", fmt.Errorf("wafake: encrypt for %s: %w", group, err)
	}
	dist, err := proto.Marshal(&waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{
		GroupID: proto.String(group.String()), AxolotlSenderKeyDistributionMessage: skdm.Serialize(),
	}})
	if err != nil {
		return "", err
	}
	// Re-sent on a retry receipt, the message goes pairwise with the
	// sender key distribution inside, as whatsmeow's sender does (retry.go
	// handleRetryReceipt), so that the one copy gives the device both.
	withKey := proto.Clone(msg).(*waE2E.Message)
	withKey.SenderKeyDistributionMessage = &waE2E.SenderKeyDistributionMessage{
		GroupID: proto.String(group.String()), AxolotlSenderKeyDistributionMessage: skdm.Serialize(),
	}
	retryPlain, err := proto.Marshal(withKey)
	if err != nil {
		return "", err
	}
	id := newMessageID()
	attrs := waBinary.Attrs{
		"id": id, "from": group, "type": messageType(msg), "t": strconv.FormatInt(time.Now().Unix(), 10),
		"notify": "Contact " + from, "participant": sender.jid(), "participant_lid": lid, "addressing_mode": "pn",
	}
	if byLID {
		attrs["participant"], attrs["participant_pn"], attrs["addressing_mode"] = lid, sender.jid(), "lid"
		delete(attrs, "participant_lid")
	}
	for _, comp := range comps {
		pair, err := n.phoneEncrypt(sender, comp, dist)
		if err != nil {
			return "", err
		}
		n.rememberSent(comp, sentMessage{id: id, sender: sender, plain: retryPlain, attrs: attrs, enc: encExtra(pair)})
		n.queue(comp, id, waBinary.Node{Tag: "message", Attrs: attrs, Content: []waBinary.Node{
			pair, {Tag: "enc", Attrs: waBinary.Attrs{"v": "2", "type": "skmsg"}, Content: sk.SignedSerialize()},
		}})
	}
	return id, nil
}

// padded appends whatsmeow's random padding (n bytes of value n) to plain.
func padded(plain []byte) []byte {
	pad := byte(1 + time.Now().UnixNano()%15)
	out := append(make([]byte, 0, len(plain)+int(pad)), plain...)
	for range pad {
		out = append(out, pad)
	}
	return out
}
