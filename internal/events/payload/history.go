package payload

// HistorySet is the data of messaging-history.set: one part of a history
// sync, the chats and messages the phone hands a linked device (after
// linking, and later on demand). A sync with many messages is split into
// several events of at most a few dozen messages each (Part of Parts), so
// that every event stays small; the chats and contacts a sync carries come
// as chats.upsert and contacts.upsert events before its parts.
type HistorySet struct {
	// SyncType is WhatsApp's name of the sync: INITIAL_BOOTSTRAP,
	// INITIAL_STATUS_V3, FULL, RECENT, PUSH_NAME, NON_BLOCKING_DATA,
	// ON_DEMAND.
	SyncType string `json:"syncType"`
	// ChunkOrder numbers the syncs of one kind as the phone sends them;
	// Progress is the phone's percentage of the whole history sent, null
	// when it does not say.
	ChunkOrder int  `json:"chunkOrder"`
	Progress   *int `json:"progress"`
	// Part (from 1) of Parts: the events this sync was split into.
	Part  int `json:"part"`
	Parts int `json:"parts"`
	// Conversations, Contacts and MessageCount count what the whole sync
	// carried.
	Conversations int `json:"conversations"`
	Contacts      int `json:"contacts"`
	MessageCount  int `json:"messageCount"`
	// Chat is, on an ON_DEMAND sync (the answer to requestHistory), the
	// chat asked about, also when the phone held nothing older; null on
	// the others.
	Chat Text `json:"chat"`
	// Messages are this part's messages, in the shape of the message
	// kinds, chat after chat, each chat's messages as the phone ordered
	// them.
	Messages []Message `json:"messages"`
}

// Chat is the data of chats.upsert: a chat the account has, with what is
// known of it; absent values are null.
type Chat struct {
	ID          string `json:"id"`   // the chat: a user by phone JID when known, or a group
	Name        Text   `json:"name"` // the group's subject or the contact's name
	LID         Text   `json:"lid"`  // a user chat's LID, when known
	UnreadCount *int   `json:"unreadCount"`
	Archived    *bool  `json:"archived"`
	Pinned      *bool  `json:"pinned"`
	// MuteUntil is when the chat's mute ends; null when it is not muted
	// (a chat muted for ever has a date far in the future).
	MuteUntil Time  `json:"muteUntil"`
	ReadOnly  *bool `json:"readOnly"`
	// EphemeralSeconds is the chat's disappearing-messages timer; 0 off.
	EphemeralSeconds *int `json:"ephemeralSeconds"`
	// LastMessageAt is when the chat's last message was sent.
	LastMessageAt Time `json:"lastMessageAt"`
}

func (*HistorySet) isData() {}
func (*Chat) isData()       {}
