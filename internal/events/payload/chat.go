package payload

// ChatUpdate is the data of chats.update: what changed about a chat, on the
// phone or another device of the account (app state) or in a group's
// settings. Only what changed is set; the rest is null.
type ChatUpdate struct {
	ID       string `json:"id"`
	Archived *bool  `json:"archived"`
	Pinned   *bool  `json:"pinned"`
	// Muted is whether notifications are muted; MuteUntil is when a mute
	// ends, null for a mute without end.
	Muted     *bool `json:"muted"`
	MuteUntil Time  `json:"muteUntil"`
	// Read is whether the chat was marked read (true) or unread (false);
	// marked read, it has no unread message left (unreadCount 0).
	Read        *bool `json:"read"`
	UnreadCount *int  `json:"unreadCount"`
	// Cleared is set when the chat's messages were cleared (the chat stays).
	Cleared *bool `json:"cleared"`
	// EphemeralSeconds is the chat's disappearing-messages timer; 0 is off.
	EphemeralSeconds *uint32 `json:"ephemeralSeconds"`
	Timestamp        Time    `json:"timestamp"`
}

// ChatDelete is the data of chats.delete: the chat was deleted on the
// phone or another device of the account.
type ChatDelete struct {
	ID          string `json:"id"`
	DeleteMedia bool   `json:"deleteMedia"` // its media were deleted from the device too
	Timestamp   Time   `json:"timestamp"`
}

// MessageDelete is the data of messages.delete: messages deleted for the
// account only (not for everyone: that is messages.update "revoked"). One
// message (id set) or all messages of the chat (all, when it was cleared).
type MessageDelete struct {
	ID          Text   `json:"id"` // null with all
	Chat        string `json:"chat"`
	FromMe      *bool  `json:"fromMe"` // null with all
	Sender      Text   `json:"sender"` // the sender of a received group message; null otherwise
	All         bool   `json:"all"`
	DeleteMedia bool   `json:"deleteMedia"`
	Timestamp   Time   `json:"timestamp"`
}

func (*ChatUpdate) isData()    {}
func (*ChatDelete) isData()    {}
func (*MessageDelete) isData() {}
