package whatsapp

// Labels (WhatsApp Business), from app state: labels.edit for a label
// created, changed or deleted, labels.association for a label put on or
// taken off a chat or a message.

import (
	"context"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The label kinds (events.md).
const (
	KindLabelsEdit        = "labels.edit"        // {id, name, color, predefinedId, deleted, timestamp}
	KindLabelsAssociation = "labels.association" // {labelId, type: chat|message, chat, messageId?, labeled, timestamp}
)

// handleLabel publishes LabelEdit, LabelAssociationChat and
// LabelAssociationMessage.
func (r *clientRun) handleLabel(raw any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var ev Event
	switch evt := raw.(type) {
	case *events.LabelEdit:
		ev = Event{Kind: KindLabelsEdit, Data: &payload.Label{
			ID: evt.LabelID, Name: payload.Text(evt.Action.GetName()), Color: evt.Action.Color,
			PredefinedID: evt.Action.PredefinedID, Deleted: evt.Action.GetDeleted(), Timestamp: payload.At(evt.Timestamp),
		}}
	case *events.LabelAssociationChat:
		ev = Event{Kind: KindLabelsAssociation, Data: &payload.LabelAssociation{
			LabelID: evt.LabelID, Type: "chat", Chat: r.chatID(ctx, evt.JID),
			Labeled: evt.Action.GetLabeled(), Timestamp: payload.At(evt.Timestamp),
		}}
	case *events.LabelAssociationMessage:
		ev = Event{Kind: KindLabelsAssociation, Data: &payload.LabelAssociation{
			LabelID: evt.LabelID, Type: "message", Chat: r.chatID(ctx, evt.JID), MessageID: payload.Text(evt.MessageID),
			Labeled: evt.Action.GetLabeled(), Timestamp: payload.At(evt.Timestamp),
		}}
	default:
		return true
	}
	return r.m.publishEvents(r.s, r.cli, ev) == nil
}
