package whatsapp

// Building the message of each kind of send: one builder per kind, keyed
// by the kind's name (Outgoing.Type). internal/messaging's kind table names
// these builders, and its test holds the two tables to the same kinds.

import (
	"context"
	"io"
	"slices"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/fault"
)

// builder is how one kind of message is built: the media host its media
// is uploaded to first ("": none), then its message from out and the
// upload. The upload is apart so that building needs no network once it
// is done (the tests build every kind with a made-up upload).
type builder struct {
	upload whatsmeow.MediaType
	build  func(cli *whatsmeow.Client, out Outgoing, up whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error)
}

// builders is the builder of each kind of send.
func builders() map[string]builder {
	return map[string]builder{
		"text":     {build: textMessage},
		"poll":     {build: pollMessage},
		"location": {build: locationMessage},
		"contact":  {build: contactMessage},
		"image":    {upload: whatsmeow.MediaImage, build: mediaContent},
		"video":    {upload: whatsmeow.MediaVideo, build: mediaContent},
		"document": {upload: whatsmeow.MediaDocument, build: mediaContent},
		"audio":    {upload: whatsmeow.MediaAudio, build: mediaContent},
		// Stickers go to the image host, as WhatsApp's apps upload them.
		"sticker": {upload: whatsmeow.MediaImage, build: stickerMessage},
	}
}

// Builders lists the kinds of message the adapter builds (Outgoing.Type),
// sorted.
func Builders() []string {
	var names []string
	for name := range builders() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// buildMessage builds the message of out, uploading its media.
func buildMessage(ctx context.Context, id string, cli *whatsmeow.Client, out Outgoing) (*waE2E.Message, error) {
	b, ok := builders()[out.Type]
	if !ok {
		return nil, fault.InvalidField("type", "unknown message type %q", out.Type)
	}
	var up whatsmeow.UploadResponse
	if b.upload != "" {
		md := out.Media
		if md == nil || len(md.Data) == 0 && (md.Body == nil || md.Body.Size() == 0) {
			return nil, fault.InvalidField("source", "the %s is empty", out.Type)
		}
		var err error
		if len(md.Data) > 0 {
			up, err = cli.Upload(ctx, md.Data, b.upload)
		} else {
			up, err = uploadBody(ctx, cli, md.Body, b.upload)
		}
		if err != nil {
			return nil, classify(id, "upload the "+out.Type, err)
		}
	}
	return b.build(cli, out, up, contextInfo(out))
}

// uploadBody uploads media kept out of memory: encrypted as it is read,
// into a temporary file the upload is then read from.
func uploadBody(ctx context.Context, cli *whatsmeow.Client, body Body, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	enc, err := tempFile()
	if err != nil {
		return whatsmeow.UploadResponse{}, err
	}
	defer enc.Close()
	return cli.UploadReader(ctx, io.NewSectionReader(body, 0, body.Size()), enc, mt)
}

// textMessage is a text, extended when it has context (mentions, a quote,
// the forwarded mark) or a link preview.
func textMessage(_ *whatsmeow.Client, out Outgoing, _ whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if strings.TrimSpace(out.Text) == "" {
		return nil, fault.InvalidField("text", "text must not be empty")
	}
	p := out.LinkPreview
	if ci == nil && p == nil {
		return &waE2E.Message{Conversation: proto.String(out.Text)}, nil
	}
	t := &waE2E.ExtendedTextMessage{Text: proto.String(out.Text), ContextInfo: ci}
	if p != nil {
		t.MatchedText, t.Title, t.Description = proto.String(p.MatchedText), nonEmpty(p.Title), nonEmpty(p.Description)
		t.PreviewType = waE2E.ExtendedTextMessage_NONE.Enum()
		if len(p.Thumbnail) > 0 {
			t.JPEGThumbnail, t.ThumbnailWidth, t.ThumbnailHeight = p.Thumbnail, nonZero(p.ThumbWidth), nonZero(p.ThumbHeight)
		}
	}
	return &waE2E.Message{ExtendedTextMessage: t}, nil
}

// pollMessage is a poll as whatsmeow builds it: with a fresh message
// secret, which the client keeps when it sends the poll, so that the
// votes that come back can be decrypted.
func pollMessage(cli *whatsmeow.Client, out Outgoing, _ whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if out.Poll == nil || len(out.Poll.Options) < 2 {
		return nil, fault.InvalidField("options", "a poll needs at least 2 options")
	}
	msg := cli.BuildPollCreation(out.Text, out.Poll.Options, out.Poll.Selectable)
	msg.GetPollCreationMessage().ContextInfo = ci
	return msg, nil
}

func locationMessage(_ *whatsmeow.Client, out Outgoing, _ whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	return &waE2E.Message{LocationMessage: &waE2E.LocationMessage{
		DegreesLatitude: proto.Float64(out.Latitude), DegreesLongitude: proto.Float64(out.Longitude),
		Name: nonEmpty(out.Name), Address: nonEmpty(out.Address), ContextInfo: ci,
	}}, nil
}

func contactMessage(_ *whatsmeow.Client, out Outgoing, _ whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	if out.VCard == "" {
		return nil, fault.InvalidField("contact", "contact is required")
	}
	return &waE2E.Message{ContactMessage: &waE2E.ContactMessage{
		DisplayName: proto.String(out.ContactName), Vcard: proto.String(out.VCard), ContextInfo: ci,
	}}, nil
}

// stickerMessage is a prepared sticker (a 512×512 WebP) as WhatsApp's
// apps send it: uploaded to the image host, as a sticker message.
func stickerMessage(_ *whatsmeow.Client, out Outgoing, up whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	md := out.Media
	return &waE2E.Message{StickerMessage: &waE2E.StickerMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
		MediaKeyTimestamp: proto.Int64(time.Now().Unix()), Mimetype: proto.String("image/webp"),
		Width: nonZero(md.Width), Height: nonZero(md.Height), IsAnimated: proto.Bool(md.Animated), ContextInfo: ci,
	}}, nil
}

// mediaContent is the message of out's uploaded image, video, document or
// audio, wrapped as view-once when it is.
func mediaContent(_ *whatsmeow.Client, out Outgoing, up whatsmeow.UploadResponse, ci *waE2E.ContextInfo) (*waE2E.Message, error) {
	md := out.Media
	mimetype := md.Mimetype
	if out.VoiceNote {
		mimetype = voiceNoteMimetype
	}
	if mimetype == "" {
		mimetype = "application/octet-stream"
	}
	keyTime := proto.Int64(time.Now().Unix())
	var msg *waE2E.Message
	switch out.Type {
	case "image":
		msg = &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			MediaKeyTimestamp: keyTime, Mimetype: proto.String(mimetype), Caption: nonEmpty(out.Caption),
			JPEGThumbnail: md.Thumbnail, Width: nonZero(md.Width), Height: nonZero(md.Height), ContextInfo: ci,
		}}
	case "video":
		msg = &waE2E.Message{VideoMessage: &waE2E.VideoMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			MediaKeyTimestamp: keyTime, Mimetype: proto.String(mimetype), Caption: nonEmpty(out.Caption),
			JPEGThumbnail: md.Thumbnail, Width: nonZero(md.Width), Height: nonZero(md.Height),
			Seconds: nonZero(md.Seconds), GifPlayback: proto.Bool(out.GIFPlayback), ContextInfo: ci,
		}}
	case "document":
		name := md.FileName
		if name == "" {
			name = "document"
		}
		msg = &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			MediaKeyTimestamp: keyTime, Mimetype: proto.String(mimetype), Caption: nonEmpty(out.Caption),
			FileName: proto.String(name), Title: proto.String(name), JPEGThumbnail: md.Thumbnail, ContextInfo: ci,
		}}
	default: // audio
		a := &waE2E.AudioMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			MediaKeyTimestamp: keyTime, Mimetype: proto.String(mimetype), Seconds: nonZero(md.Seconds), ContextInfo: ci,
		}
		if out.VoiceNote {
			a.PTT, a.Waveform = proto.Bool(true), md.Waveform
		}
		msg = &waE2E.Message{AudioMessage: a}
	}
	if !out.ViewOnce {
		return msg, nil
	}
	// As WhatsApp's apps send it: the flag on the media, and the message
	// wrapped as view-once.
	if img := msg.GetImageMessage(); img != nil {
		img.ViewOnce = proto.Bool(true)
	}
	if v := msg.GetVideoMessage(); v != nil {
		v.ViewOnce = proto.Bool(true)
	}
	if a := msg.GetAudioMessage(); a != nil {
		a.ViewOnce = proto.Bool(true)
	}
	return &waE2E.Message{ViewOnceMessageV2: &waE2E.FutureProofMessage{Message: msg}}, nil
}
