package payload

// Presence is the data of presence.update: a contact came online or went
// offline (availability, only for contacts the session subscribed to), or
// is typing or recording in a chat (chat state, always delivered).
type Presence struct {
	Chat             string `json:"chat"`        // the chat: the contact's JID, or the group
	Participant      string `json:"participant"` // who: by phone JID when known
	ParticipantPhone Text   `json:"participantPhone"`
	ParticipantLID   Text   `json:"participantLid"`
	// Presence is available or unavailable (availability), or composing,
	// recording or paused (chat state).
	Presence string `json:"presence"`
	// LastSeen is when an unavailable contact was last online; null when
	// it hides it, and for every other presence.
	LastSeen Time `json:"lastSeen"`
	// Media is what a composing contact is writing when WhatsApp says
	// (audio for a voice note: presence recording); null otherwise.
	Media Text `json:"media"`
}

func (*Presence) isData() {}
