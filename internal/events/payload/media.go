package payload

// MediaUpdate is the data of messages.media-update: the phone answered a
// request to upload a message's media again (the media host had deleted
// the blob), with a new location or an error.
type MediaUpdate struct {
	ID     string `json:"id"`     // the message whose media it is
	Chat   string `json:"chat"`   // the chat of the message
	FromMe bool   `json:"fromMe"` // the message is the account's
	// MediaURL is this service's media route of the message, which serves
	// the re-uploaded media; null when the retry failed.
	MediaURL Text `json:"mediaUrl"`
	// Error is why the phone could not upload the media again; null on
	// success.
	Error     Text `json:"error"`
	Timestamp Time `json:"timestamp"`
}

func (*MediaUpdate) isData() {}
