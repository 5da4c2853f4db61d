package whatsapp

// Edits that arrive encrypted under the message secret of the message they
// change (a SecretEncryptedMessage), as WhatsApp's apps now send them:
// opened with the secret whatsmeow kept when the message came or was
// sent, then handled as a plain edit, so the store judges them the same.

import (
	"context"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// openSecretEdit returns evt with its encrypted edit opened into the plain
// edit it carries. ok is false when it could not be opened: the failure
// is published then (done tells whether that was stored) and the message
// goes no further. An encrypted message of another kind is returned as
// it is.
func (r *clientRun) openSecretEdit(evt *events.Message) (opened *events.Message, ok, done bool) {
	enc := evt.Message.GetSecretEncryptedMessage()
	if enc.GetSecretEncType() != waE2E.SecretEncryptedMessage_MESSAGE_EDIT {
		return evt, true, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	inner, err := r.cli.DecryptSecretEncryptedMessage(ctx, evt)
	if err != nil {
		info := &evt.Info
		r.s.log.Warn("an encrypted edit could not be decrypted", "message_id", info.ID, "target", enc.GetTargetMessageKey().GetID(), "err", err)
		d := &payload.MessageStatus{
			ID: info.ID, Chat: chatOf(ctx, r.cli, &info.MessageSource).String(), Status: "failed", Timestamp: payload.At(info.Timestamp),
			Error: payload.Text("an edit of message " + enc.GetTargetMessageKey().GetID() + " arrived encrypted under a message secret this device does not have"),
		}
		stored := r.m.publishEvents(r.s, r.cli, Event{Kind: KindMessagesUpdate, Data: d,
			Key: stanzaKey(KindMessagesUpdate, info.Chat.String(), info.Sender.String(), info.ID)}) == nil
		return nil, false, stored
	}
	// The plaintext is the new content; a client may also wrap it in the
	// edit's protocol message, as a plain edit is.
	edited := inner
	if pm := inner.GetProtocolMessage(); pm.GetType() == waE2E.ProtocolMessage_MESSAGE_EDIT {
		edited = pm.GetEditedMessage()
	}
	out := *evt
	out.Message = &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(), Key: enc.GetTargetMessageKey(), EditedMessage: edited,
	}}
	return &out, true, true
}
