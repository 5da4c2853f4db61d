package payload

// Person is a WhatsApp user as far as WhatsApp told its phone number, its
// LID, or both: JID is the phone JID when known, else the LID.
type Person struct {
	JID   string `json:"jid"`
	Phone Text   `json:"phone"` // digits, no +
	LID   Text   `json:"lid"`   // "…@lid"
}

// Contact is an entry of the account's address book: the data of
// contacts.upsert. The names the phone's address book holds (fullName,
// firstName) come from app state; pushName (the name the user gave
// themselves) and businessName (a verified business name) from what
// WhatsApp told about the user.
type Contact struct {
	ID           string `json:"id"` // the contact's JID: the phone JID when known
	Phone        Text   `json:"phone"`
	LID          Text   `json:"lid"`
	PushName     Text   `json:"pushName"`
	FullName     Text   `json:"fullName"`
	FirstName    Text   `json:"firstName"`
	BusinessName Text   `json:"businessName"`
}

// Picture is a change of a user's or a group's profile picture.
type Picture struct {
	ID      Text `json:"id"`      // the new picture's id; null when removed
	Removed bool `json:"removed"` // the picture was removed
	Author  Text `json:"author"`  // who changed it, when WhatsApp said
}

// ContactUpdate is the data of contacts.update: what WhatsApp told about a
// user. Only what changed is set; the rest is null.
type ContactUpdate struct {
	ID           string   `json:"id"` // the user's JID: the phone JID when known
	Phone        Text     `json:"phone"`
	LID          Text     `json:"lid"`
	PushName     Text     `json:"pushName"`     // the name the user gave themselves
	BusinessName Text     `json:"businessName"` // the user's verified business name
	About        *string  `json:"about"`        // the user's about text ("" when cleared)
	Picture      *Picture `json:"picture"`
	Timestamp    Time     `json:"timestamp"`
}

func (*Contact) isData()       {}
func (*ContactUpdate) isData() {}
