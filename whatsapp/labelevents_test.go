package whatsapp

import (
	"testing"
)

// TestLabelEvents: labels the phone creates, changes and deletes are
// labels.edit; a label put on or taken off a chat or a message is
// labels.association.
func TestLabelEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	e.appStateSynced(m, "s1")
	chat := phoneJID(peer)

	tests := []struct {
		name  string
		phone func() error
		kind  string
		want  map[string]any
	}{
		{"create", func() error { return e.net.EditLabel(phone, "5", "New customer", 1, false) }, KindLabelsEdit, map[string]any{
			"id": "5", "name": "New customer", "color": 1, "predefinedId": nil, "deleted": false, "timestamp": anyTime,
		}},
		{"rename", func() error { return e.net.EditLabel(phone, "5", "Customer", 2, false) }, KindLabelsEdit, map[string]any{
			"id": "5", "name": "Customer", "color": 2, "predefinedId": nil, "deleted": false, "timestamp": anyTime,
		}},
		{"label a chat", func() error { return e.net.LabelChat(phone, "5", chat, true) }, KindLabelsAssociation, map[string]any{
			"labelId": "5", "type": "chat", "chat": chat.String(), "messageId": nil, "labeled": true, "timestamp": anyTime,
		}},
		{"label a message", func() error { return e.net.LabelMessage(phone, "5", chat, "3EB0LBL", true) }, KindLabelsAssociation, map[string]any{
			"labelId": "5", "type": "message", "chat": chat.String(), "messageId": "3EB0LBL", "labeled": true, "timestamp": anyTime,
		}},
		{"unlabel the chat", func() error { return e.net.LabelChat(phone, "5", chat, false) }, KindLabelsAssociation, map[string]any{
			"labelId": "5", "type": "chat", "chat": chat.String(), "messageId": nil, "labeled": false, "timestamp": anyTime,
		}},
		{"delete", func() error { return e.net.EditLabel(phone, "5", "Customer", 2, true) }, KindLabelsEdit, map[string]any{
			"id": "5", "name": "Customer", "color": 2, "predefinedId": nil, "deleted": true, "timestamp": anyTime,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(e.pub.events("s1"))
			if err := tt.phone(); err != nil {
				t.Fatal(err)
			}
			e.wantEvents(t, "s1", n, published{Kind: tt.kind, Data: tt.want})
		})
	}
	e.settle(st)
}
