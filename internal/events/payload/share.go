package payload

// PhoneNumberShare is the data of chats.phoneNumberShare: a contact who
// writes under its LID (its number hidden) shared its phone number in the
// chat.
type PhoneNumberShare struct {
	Chat      string `json:"chat"`  // the chat, by phone JID now that it is known
	LID       string `json:"lid"`   // the contact's LID ("…@lid")
	Phone     Text   `json:"phone"` // digits, no +; null if WhatsApp did not tell it with the share
	Timestamp Time   `json:"timestamp"`
}

func (*PhoneNumberShare) isData() {}
