package payload

// Call is the data of call: one stanza of a call's signalling, as WhatsApp
// relays it to the linked device. A call rings on the phone; the device
// only hears about it (it cannot take part), so a receiver sees an offer
// and, later, how it ended.
type Call struct {
	// CallID is the call's id, the same on every stanza of one call
	// (surface.md names it callId, apart from the envelope's id).
	CallID string `json:"callId"`
	// From is who sent this stanza: the caller for an offer, whoever
	// accepted, rejected or hung up for the others. By phone JID when known.
	From      string `json:"from"`
	FromPhone Text   `json:"fromPhone"` // digits, no +
	FromLID   Text   `json:"fromLid"`   // "…@lid"
	// Status is the stanza: offer, offer_notice, accept, preaccept,
	// transport, terminate, reject, relaylatency.
	Status string `json:"status"`
	// IsVideo is whether the call is a video call; null when the stanza
	// does not say (only offers and offer notices do).
	IsVideo *bool `json:"isVideo"`
	// IsGroup is whether the call is a group call; GroupJID the group,
	// when the call is in one.
	IsGroup  bool `json:"isGroup"`
	GroupJID Text `json:"groupJid"`
	// Reason is why a call ended (terminate), as WhatsApp words it.
	Reason    Text `json:"reason"`
	Timestamp Time `json:"timestamp"`
}

func (*Call) isData() {}
