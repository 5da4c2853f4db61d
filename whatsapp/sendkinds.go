package whatsapp

// The sends of the conversation surface beyond the seed's kinds: polls,
// stickers, texts with a link preview, and the forwarded mark.

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/fault"
)

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
	Options    []string
	Selectable int
}

// textMessage is a text, extended when it has context (mentions, a quote,
// the forwarded mark) or a link preview.
func textMessage(out Outgoing, ci *waE2E.ContextInfo) *waE2E.Message {
	p := out.LinkPreview
	if ci == nil && p == nil {
		return &waE2E.Message{Conversation: proto.String(out.Text)}
	}
	t := &waE2E.ExtendedTextMessage{Text: proto.String(out.Text), ContextInfo: ci}
	if p != nil {
		t.MatchedText, t.Title, t.Description = proto.String(p.MatchedText), nonEmpty(p.Title), nonEmpty(p.Description)
		t.PreviewType = waE2E.ExtendedTextMessage_NONE.Enum()
		if len(p.Thumbnail) > 0 {
			t.JPEGThumbnail, t.ThumbnailWidth, t.ThumbnailHeight = p.Thumbnail, nonZero(p.ThumbWidth), nonZero(p.ThumbHeight)
		}
	}
	return &waE2E.Message{ExtendedTextMessage: t}
}

// pollMessage is a poll as whatsmeow builds it: with a fresh message
// secret, which the client keeps when it sends the poll, so that the
// votes that come back can be decrypted.
func pollMessage(cli *whatsmeow.Client, out Outgoing, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if out.Poll == nil || len(out.Poll.Options) < 2 {
		return nil, fault.InvalidField("options", "a poll needs at least 2 options")
	}
	msg := cli.BuildPollCreation(out.Text, out.Poll.Options, out.Poll.Selectable)
	msg.GetPollCreationMessage().ContextInfo = ci
	return msg, nil
}

// stickerMessage uploads a prepared sticker (a 512×512 WebP) as WhatsApp's
// apps do: on the image host, as a sticker message.
func stickerMessage(ctx context.Context, id string, cli *whatsmeow.Client, out Outgoing, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	md := out.Media
	if md == nil || len(md.Data) == 0 {
		return nil, fault.InvalidField("source", "the sticker is empty")
	}
	up, err := cli.Upload(ctx, md.Data, whatsmeow.MediaImage)
	if err != nil {
		return nil, classify(id, "upload the sticker", err)
	}
	return &waE2E.Message{StickerMessage: &waE2E.StickerMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
		MediaKeyTimestamp: proto.Int64(time.Now().Unix()), Mimetype: proto.String("image/webp"),
		Width: nonZero(md.Width), Height: nonZero(md.Height), IsAnimated: proto.Bool(md.Animated), ContextInfo: ci,
	}}, nil
}
