package whatsapp

// What the sends of the conversation surface beyond the seed's kinds carry:
// a poll's options and a text's link preview (built in build.go).

// LinkPreview is what a text's first URL shows: made by the app
// (internal/linkpreview), carried as WhatsApp's apps carry it. Scheduled
// sends keep it as JSON.
type LinkPreview struct {
	URL         string `json:"url"`         // the canonical URL
	MatchedText string `json:"matchedText"` // the URL as it appears in the text
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Thumbnail   []byte `json:"thumbnail,omitempty"` // JPEG or nil
	ThumbWidth  uint32 `json:"thumbWidth,omitempty"`
	ThumbHeight uint32 `json:"thumbHeight,omitempty"`
}

// PollSpec is what a poll asks: its options and how many of them a voter
// may choose (the question is the message's text).
type PollSpec struct {
	Options    []string `json:"options"`
	Selectable int      `json:"selectable"`
}
