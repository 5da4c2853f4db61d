package payload

// Chat is a chat as the account sees it: the data of chats.upsert.
type Chat struct {
	ID        string `json:"id"`   // the chat's JID: a user's or a group's
	Name      Text   `json:"name"` // a contact's push name or a group's subject, when known
	IsGroup   bool   `json:"isGroup"`
	Timestamp Time   `json:"timestamp"` // of the message or event that made the chat known
}

func (*Chat) isData() {}
