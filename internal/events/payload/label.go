package payload

// Label is the data of labels.edit: a label of the account (WhatsApp
// Business) was created, changed or deleted.
type Label struct {
	ID           string `json:"id"`
	Name         Text   `json:"name"`
	Color        *int32 `json:"color"`        // index into WhatsApp's label palette
	PredefinedID *int32 `json:"predefinedId"` // set for WhatsApp's own labels
	Deleted      bool   `json:"deleted"`
	Timestamp    Time   `json:"timestamp"`
}

// LabelAssociation is the data of labels.association: a label put on or
// taken off a chat or a message.
type LabelAssociation struct {
	LabelID   string `json:"labelId"`
	Type      string `json:"type"` // chat, message
	Chat      string `json:"chat"`
	MessageID Text   `json:"messageId"` // with type message
	Labeled   bool   `json:"labeled"`   // false: the label was taken off
	Timestamp Time   `json:"timestamp"`
}

func (*Label) isData()            {}
func (*LabelAssociation) isData() {}
