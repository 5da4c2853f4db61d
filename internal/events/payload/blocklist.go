package payload

// Blocklist is the data of blocklist.set: the account's whole block list.
type Blocklist struct {
	Blocked []Person `json:"blocked"` // [] when nobody is blocked
}

// BlocklistChange is the data of blocklist.update: one user blocked or
// unblocked.
type BlocklistChange struct {
	JID    string `json:"jid"`
	Phone  Text   `json:"phone"`
	LID    Text   `json:"lid"`
	Action string `json:"action"` // block, unblock
}

func (*Blocklist) isData()       {}
func (*BlocklistChange) isData() {}
