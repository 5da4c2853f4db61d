package payload

// Message is a chat message: the data of inbound-message.upsert and
// outbound-message.upsert, and the message inside other kinds (events.md,
// "Data of the message kinds").
type Message struct {
	ID     string `json:"id"`
	Chat   string `json:"chat"`   // the chat's JID: a user's or a group's
	Sender string `json:"sender"` // the sender's JID as WhatsApp addressed it (phone or LID)
	// SenderPhone and SenderLID are both given whenever WhatsApp told
	// either, whichever addressing the message used.
	SenderPhone Text     `json:"senderPhone"` // digits, no +
	SenderLID   Text     `json:"senderLid"`   // "…@lid"
	FromMe      bool     `json:"fromMe"`
	PushName    Text     `json:"pushName"`
	Timestamp   Time     `json:"timestamp"`
	Type        string   `json:"type"` // text, image, video, audio, voice, document, sticker, location, contact, reaction, poll, revoke, edit, unknown
	Text        Text     `json:"text"`
	Caption     Text     `json:"caption"`
	FileName    Text     `json:"fileName"`
	Mimetype    Text     `json:"mimetype"`
	Size        *int64   `json:"size"`     // bytes of the media
	MediaURL    Text     `json:"mediaUrl"` // this service's media route, never WhatsApp's
	Latitude    *float64 `json:"latitude"`
	Longitude   *float64 `json:"longitude"`
	Name        Text     `json:"name"`    // a location's or a contact's name
	Address     Text     `json:"address"` // a location's address
	VCard       Text     `json:"vcard"`
	QuotedID    Text     `json:"quotedId"` // the message this one replies to, reacts to, revokes or edits
	Mentions    []string `json:"mentions"` // JIDs; null when none
	IsGroup     bool     `json:"isGroup"`
	// PollOptions are a poll's option names (text is its question); null
	// for other types. Votes name options by sha256 of these (PollVote).
	PollOptions []string `json:"pollOptions"`
	// ViewOnce: an image, video or voice note its recipient may open
	// once; its media is served once, and it is never forwarded.
	ViewOnce bool `json:"viewOnce"`
}

// MessageStatus is what happened to a message: the data of messages.send
// (sent, failed) and messages.update (delivered, read, played, revoked,
// edited, sent, failed), one event per message.
type MessageStatus struct {
	ID        string `json:"id"`
	Chat      string `json:"chat"`
	Status    string `json:"status"`
	Error     Text   `json:"error"` // why a send failed
	Timestamp Time   `json:"timestamp"`
	// MessageID is the message that changed this one (the revoke or the
	// edit); null for receipts and sends.
	MessageID Text `json:"messageId"`
	// Text and Caption are an edit's new content.
	Text    Text `json:"text"`
	Caption Text `json:"caption"`
	// Sender is the sender of the message a receipt is about when it is a
	// message the account received; for a revoke or an edit (applied or
	// refused) who sent the revoke or the edit; null otherwise.
	Sender Text `json:"sender"`
	// ByMe and ByAdmin say what the message store needs to judge a revoke
	// or an edit and the JSON does not carry: that the account sent it
	// (from any of its devices), and that its sender is an admin of the
	// group. They are never part of the event.
	ByMe    bool `json:"-"`
	ByAdmin bool `json:"-"`
	// PollVote is the vote of status "voted" (the message is the poll),
	// `vote` as surface.md names it; null for every other status.
	PollVote *PollVote `json:"vote"`
}

// Receipt is a group participant's receipt of one of the account's
// messages: the data of message-receipt.update.
type Receipt struct {
	ID               string `json:"id"`
	Chat             string `json:"chat"`
	Status           string `json:"status"` // delivered, read, played
	Timestamp        Time   `json:"timestamp"`
	Participant      string `json:"participant"`
	ParticipantPhone Text   `json:"participantPhone"`
	ParticipantLID   Text   `json:"participantLid"`
}

// ReactionKey names the message a reaction is about, as WhatsApp keys it.
type ReactionKey struct {
	ID          string `json:"id"`
	RemoteJID   Text   `json:"remoteJid"`
	FromMe      bool   `json:"fromMe"`
	Participant Text   `json:"participant"`
}

// ReactionBody is a reaction's emoji and target; an empty text is a
// reaction taken back.
type ReactionBody struct {
	Text string      `json:"text"`
	Key  ReactionKey `json:"key"`
}

// Reaction is the data of messages.reaction.
type Reaction struct {
	ID          string       `json:"id"` // the message reacted to
	Chat        string       `json:"chat"`
	Sender      string       `json:"sender"`
	SenderPhone Text         `json:"senderPhone"`
	SenderLID   Text         `json:"senderLid"`
	FromMe      bool         `json:"fromMe"`
	Timestamp   Time         `json:"timestamp"`
	MessageID   string       `json:"messageId"` // the reaction message itself
	Reaction    ReactionBody `json:"reaction"`
}

func (*Message) isData()       {}
func (*MessageStatus) isData() {}
func (*Receipt) isData()       {}
func (*Reaction) isData()      {}
