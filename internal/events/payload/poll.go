package payload

// PollVote is a vote in a poll, in the messages.update of the poll message
// (status "voted"). WhatsApp sends the selected options as SHA-256 hashes
// of the option names; names are given where the poll's options are known.
// A vote replaces the voter's earlier vote; an empty selection takes it
// back.
type PollVote struct {
	PollID     string `json:"pollId"`
	Voter      string `json:"voter"` // by phone JID when known
	VoterPhone Text   `json:"voterPhone"`
	VoterLID   Text   `json:"voterLid"`
	// SelectedOptions are the names of the chosen options, in the order of
	// the hashes; null when the poll's options are not known to the
	// session (a poll it has not seen since it connected), then the hashes
	// are to be matched against sha256(option name).
	SelectedOptions []string `json:"selectedOptions"`
	// SelectedHashes are the hex SHA-256 hashes of the chosen options'
	// names; [] for a vote taken back.
	SelectedHashes []string `json:"selectedHashes"`
}
