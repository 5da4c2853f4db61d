package wafake

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"
)

// Message secrets, as WhatsApp's apps use them: a chat message carries a
// random secret (MessageContextInfo.messageSecret) that its recipients
// keep; votes in a poll and edits of a message are then encrypted under a
// key derived from it (whatsmeow's msgsecret.go, on the phone's side).
// Like WhatsApp's servers, the network passes them on unread: only the
// receivers can check who may edit what.

// messageSecret is the secret the phone of a gives its message id: derived
// from the account's identity key, so that the phone knows it again when
// it edits the message, after a restart too, without keeping one per
// message.
func (a *account) messageSecret(id string) []byte {
	mac := hmac.New(sha256.New, a.identity.Priv[:])
	mac.Write([]byte("wafake message secret\x00" + id))
	return mac.Sum(nil)
}

// carriesSecret says whether a phone gives msg a secret: texts and media,
// as WhatsApp's apps do; not reactions, protocol messages or votes.
func carriesSecret(msg *waE2E.Message) bool {
	if len(msg.GetMessageContextInfo().GetMessageSecret()) > 0 {
		return false // a poll brings its own
	}
	return msg.Conversation != nil || msg.ExtendedTextMessage != nil || msg.ImageMessage != nil ||
		msg.VideoMessage != nil || msg.AudioMessage != nil || msg.DocumentMessage != nil || msg.StickerMessage != nil
}

// withSecret returns msg carrying secret (a copy: the caller's message is
// left as it was).
func withSecret(msg *waE2E.Message, secret []byte) *waE2E.Message {
	out := proto.Clone(msg).(*waE2E.Message)
	if out.MessageContextInfo == nil {
		out.MessageContextInfo = &waE2E.MessageContextInfo{}
	}
	out.MessageContextInfo.MessageSecret = secret
	return out
}

// secretKey derives the key of a modification (useCase: "Poll Vote",
// "Message Edit") of message id, which origSender sent, made by modSender.
func secretKey(secret []byte, id string, origSender, modSender types.JID, useCase string) []byte {
	info := []byte(id + origSender.ToNonAD().String() + modSender.ToNonAD().String() + useCase)
	return hkdfutil.SHA256(secret, nil, info, 32)
}

// received finds message id in the inbox of phone from, sent by the
// account to; nil when its phone never got it.
func (n *Network) received(from, to, id string) *Received {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.accounts[from]
	if a == nil {
		return nil
	}
	for i := range a.inbox {
		if r := &a.inbox[i]; r.ID == id && r.From.User == to {
			cp := *r
			return &cp
		}
	}
	return nil
}

// Vote has the phone of from vote for options (none takes its vote back)
// in poll pollID, which the account to sent it: encrypted under the poll's
// secret, as phones vote. The options are not checked: the poll's sender
// counts what it recognises. It returns the vote's message id.
func (n *Network) Vote(from, to, pollID string, options []string) (string, error) {
	r := n.received(from, to, pollID)
	secret := r.pollSecret()
	if secret == nil {
		return "", &ValueError{What: "a poll " + to + " sent to " + from, Value: pollID}
	}
	voter, creator := types.NewJID(from, types.DefaultUserServer), types.NewJID(to, types.DefaultUserServer)
	vote, err := encryptVote(secret, pollID, creator, voter, options)
	if err != nil {
		return "", err
	}
	return n.SendMessage(from, to, &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{
		PollCreationMessageKey: &waCommon.MessageKey{RemoteJID: proto.String(creator.String()), FromMe: proto.Bool(false), ID: proto.String(pollID)},
		Vote:                   vote,
		SenderTimestampMS:      proto.Int64(time.Now().UnixMilli()),
	}})
}

// encryptVote is a vote for options in poll pollID of creator, by voter,
// as phones encrypt it: the options named by the SHA-256 of their names.
func encryptVote(secret []byte, pollID string, creator, voter types.JID, options []string) (*waE2E.PollEncValue, error) {
	hashes := make([][]byte, len(options))
	for i, o := range options {
		h := sha256.Sum256([]byte(o))
		hashes[i] = h[:]
	}
	plain, err := proto.Marshal(&waE2E.PollVoteMessage{SelectedOptions: hashes})
	if err != nil {
		return nil, err
	}
	iv := make([]byte, 12)
	_, _ = rand.Read(iv)
	key := secretKey(secret, pollID, creator, voter, "Poll Vote")
	ct, err := gcmutil.Encrypt(key, iv, plain, fmt.Appendf(nil, "%s\x00%s", pollID, voter.ToNonAD()))
	if err != nil {
		return nil, err
	}
	return &waE2E.PollEncValue{EncPayload: ct, EncIV: iv}, nil
}

// pollSecret is the secret of a received poll; nil when r is none.
func (r *Received) pollSecret() []byte {
	if r == nil {
		return nil
	}
	m := r.Message
	if m.GetPollCreationMessage() == nil && m.GetPollCreationMessageV2() == nil && m.GetPollCreationMessageV3() == nil {
		return nil
	}
	return m.GetMessageContextInfo().GetMessageSecret()
}

// SendEdit has the phone of from send to an edit of message id: its own
// message (the phone never received one of that id from to), encrypted
// under the secret it gave it, as phones send edits; or one it received,
// which it can encrypt only when that message carried a secret, and sends
// plain otherwise. Nothing checks that from may edit it: receivers must.
// at is the edit's own time (the stanza's, and the protocol message's as
// the phone stamps it); zero is now. A time long after the message lets a
// late edit be tried without waiting.
func (n *Network) SendEdit(from, to, id, text string, at time.Time) (string, error) {
	if at.IsZero() {
		at = time.Now()
	}
	n.mu.Lock()
	a, err := n.accountLocked(from)
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	me, them := types.NewJID(from, types.DefaultUserServer), types.NewJID(to, types.DefaultUserServer)
	r := n.received(from, to, id)
	key := &waCommon.MessageKey{RemoteJID: proto.String(them.String()), FromMe: proto.Bool(r == nil), ID: proto.String(id)}
	edited := &waE2E.Message{Conversation: proto.String(text)}
	secret, origSender := a.messageSecret(id), me
	if r != nil {
		secret, origSender = r.Message.GetMessageContextInfo().GetMessageSecret(), them
	}
	if len(secret) == 0 {
		return n.sendMessage(from, to, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(), Key: key, EditedMessage: edited, TimestampMS: proto.Int64(at.UnixMilli()),
		}}, true, at)
	}
	plain, err := proto.Marshal(edited)
	if err != nil {
		return "", err
	}
	iv := make([]byte, 12)
	_, _ = rand.Read(iv)
	ct, err := gcmutil.Encrypt(secretKey(secret, id, origSender, me, "Message Edit"), iv, plain, nil)
	if err != nil {
		return "", err
	}
	return n.sendMessage(from, to, &waE2E.Message{SecretEncryptedMessage: &waE2E.SecretEncryptedMessage{
		TargetMessageKey: key, EncPayload: ct, EncIV: iv, SecretEncType: waE2E.SecretEncryptedMessage_MESSAGE_EDIT.Enum(),
	}}, true, at)
}

// SendRevoke has the phone of from delete message id for everyone in its
// chat with to: its own message, or one it received (then unchecked
// here, as by WhatsApp's servers).
func (n *Network) SendRevoke(from, to, id string) (string, error) {
	r := n.received(from, to, id)
	return n.SendMessage(from, to, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_REVOKE.Enum(),
		Key: &waCommon.MessageKey{
			RemoteJID: proto.String(types.NewJID(to, types.DefaultUserServer).String()), FromMe: proto.Bool(r == nil), ID: proto.String(id),
		},
	}})
}
