package messaging

// The sends of the conversation surface beyond the seed's kinds: polls,
// stickers, forwards and link previews.

import (
	"context"
	"fmt"
	"strings"
	"time"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/linkpreview"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/textrule"
	"github.com/wagraph/wagraph/whatsapp"
)

// previewBudget is the most a send waits for its link preview: the spec's
// 3 s, whatever the previewer's own setting.
const previewBudget = 3 * time.Second

// Previewer makes the preview of a text's first URL (internal/linkpreview):
// nil and no error when the text has none.
type Previewer interface {
	Preview(ctx context.Context, text string) (*linkpreview.Preview, error)
}

func poll(req Request, out *whatsapp.Outgoing) error {
	q := req.Question
	if strings.TrimSpace(q) == "" {
		return fault.InvalidField("question", "question must not be empty")
	}
	// WhatsApp's bounds of a poll are the adapter's (whatsapp.PollBeyondBounds
	// judges a received poll by them): each broken one is named here.
	if err := checkText("question", &q, whatsapp.MaxPollQuestionLen); err != nil {
		return err
	}
	n := len(req.Options)
	if n < whatsapp.MinPollOptions || n > whatsapp.MaxPollOptions {
		return fault.InvalidField("options", "options must list %d to %d options (got %d)", whatsapp.MinPollOptions, whatsapp.MaxPollOptions, n)
	}
	seen := make(map[string]int, n)
	for i, o := range req.Options {
		field := fmt.Sprintf("options[%d]", i)
		if strings.TrimSpace(o) == "" {
			return fault.InvalidField(field, "%s must not be empty", field)
		}
		if err := checkText(field, &o, whatsapp.MaxPollOptionLen); err != nil {
			return err
		}
		if err := textrule.CheckName(field, o); err != nil {
			return err
		}
		// Votes name options by the hash of their name: two equal names
		// could not be told apart, nor can a voter two that read the same
		// (textrule.Key: "Yes" and a fullwidth "Ｙｅｓ").
		key := textrule.Key(o)
		j, dup := seen[key]
		switch {
		case dup && req.Options[j] == o:
			return fault.InvalidField(field, "%s repeats options[%d] (%q): options must be distinct", field, j, fault.Clip(o, fault.QuoteLen))
		case dup:
			return fault.InvalidField(field, "%s (%q) reads as options[%d] (%q): options must be distinct to a reader (compared in NFKC, invisible characters dropped, spaces as one)",
				field, fault.Clip(o, fault.QuoteLen), j, fault.Clip(req.Options[j], fault.QuoteLen))
		}
		seen[key] = i
	}
	selectable := 1
	if req.Selectable != nil {
		selectable = *req.Selectable
	}
	if selectable < 0 || selectable > n {
		return fault.InvalidField("selectableCount", "selectableCount must be between 0 (any number) and the number of options, %d (got %d)", n, selectable)
	}
	out.Text = q
	out.Poll = &whatsapp.PollSpec{Options: append([]string(nil), req.Options...), Selectable: selectable}
	return nil
}

// sticker loads and converts a sticker's source (media.Preparer.Sticker).
func (s *Service) sticker(ctx context.Context, source string, out *whatsapp.Outgoing) error {
	data, err := s.loader.Load(ctx, "source", source)
	if err != nil {
		return err
	}
	f, err := s.prep.Sticker(ctx, data)
	if err != nil {
		return err
	}
	out.Media = mediaOf(f)
	return nil
}

// forward makes out the stored message id again, marked forwarded: a text
// as it is, media downloaded and uploaded again (WhatsApp's hosts keep a
// blob for weeks only, and a message received holds the sender's keys).
// The store keeps neither coordinates nor cards nor a poll's votes, so
// locations, contacts and polls are not forwarded.
//
// Media is bounded before anything is fetched: its declared size against
// WhatsApp's limit for its kind, then the download against that size. It
// is kept in a file (heldMedia), and holds one of the download slots from
// the download to the end of its upload: send closes it.
func (s *Service) forward(ctx context.Context, sessionID, id string, out *whatsapp.Outgoing) error {
	if strings.TrimSpace(id) == "" {
		return fault.InvalidField("messageId", "messageId must not be empty")
	}
	m, err := s.Get(ctx, sessionID, id)
	if err != nil {
		return err
	}
	if m.Status != entmessage.StatusSent && m.Status != entmessage.StatusReceived {
		return fault.New(fault.Conflict, "message %s is %s: only a sent or received message can be forwarded", id, m.Status)
	}
	if m.ViewOnce {
		return notForwarded(id)
	}
	out.Forwarded = true
	out.Type, out.Text, out.Caption = m.Type, m.Text, m.Caption
	if m.Type == TypeText {
		return nil
	}
	k, ok := forwardKinds()[m.Type]
	if !ok {
		return fault.InvalidField("messageId", "messageId %s names a %s: texts, media and stickers can be forwarded", id, m.Type)
	}
	ref, err := mediaRefOf(m)
	if err != nil {
		return err
	}
	if size := int64(ref.FileLength); size > k.limit {
		return media.OverLimit(fmt.Sprintf("message %s is %s of", id, k.noun), size, k.nouns, k.limit)
	}
	release, err := s.prep.DownloadSlot(ctx)
	if err != nil {
		return err
	}
	file, err := s.download(ctx, sessionID, m, ref, k.limit)
	if err != nil {
		release()
		if fault.CodeOf(err) == fault.TooLarge { // no size declared, and the download grew past the limit
			return media.OverLimit(fmt.Sprintf("message %s is %s of more than", id, k.noun), k.limit, k.nouns, k.limit)
		}
		return err
	}
	held := &heldMedia{file: file, release: release}
	if err := s.prepareAgain(ctx, m.Type, held, ref.FileName, out); err != nil {
		held.Close()
		return fmt.Errorf("prepare the media of message %s again: %w", id, err)
	}
	return nil
}

// forwardKind is a kind of media a forward sends again: WhatsApp's limit
// on its size (internal/media's) and its names in a refusal ("a video",
// "videos").
type forwardKind struct {
	limit       int64
	noun, nouns string
}

// forwardKinds are the kinds of stored media a forward sends again.
func forwardKinds() map[string]forwardKind {
	return map[string]forwardKind{
		TypeImage:    {media.MaxImage, "an image", "images"},
		TypeVideo:    {media.MaxVideo, "a video", "videos"},
		TypeDocument: {media.MaxDocument, "a document", "documents"},
		TypeAudio:    {media.MaxAudio, "an audio file", "audio"},
		"voice":      {media.MaxAudio, "a voice note", "voice notes"},
		TypeSticker:  {media.MaxSticker, "a sticker", "stickers"},
	}
}

// prepareAgain prepares a forward's downloaded media as a send of its
// kind is, and makes out's media the held file. A document is only
// sniffed from its first bytes; the other kinds are read whole (within
// 16 or 64 MiB, their limits), and what their preparation made anew (a
// sticker, a voice note converted) is kept in a file in their place.
func (s *Service) prepareAgain(ctx context.Context, typ string, held *heldMedia, fileName string, out *whatsapp.Outgoing) error {
	if typ == TypeDocument {
		head := make([]byte, min(held.Size(), media.HeadLen))
		if _, err := held.ReadAt(head, 0); err != nil {
			return fmt.Errorf("read the document: %w", err)
		}
		f, err := s.prep.DocumentFile(ctx, head, held.Size(), fileName)
		if err != nil {
			return err
		}
		out.Media = mediaOf(f)
		out.Media.Body = held
		return nil
	}
	data, err := held.file.Bytes()
	if err != nil {
		return err
	}
	var f media.File
	switch typ {
	case TypeImage:
		f, err = s.prep.Image(ctx, data, fileName)
	case TypeVideo:
		f, err = s.prep.Video(ctx, data, fileName)
	case TypeSticker:
		f, err = s.prep.Sticker(ctx, data)
	default:
		out.Type, out.VoiceNote = TypeAudio, typ == "voice"
		f, err = s.prep.Audio(ctx, data, out.VoiceNote)
	}
	if err != nil {
		return err
	}
	if !sameBytes(f.Data, data) {
		made, err := whatsapp.NewMediaFile(f.Data)
		if err != nil {
			return err
		}
		held.replace(made)
	}
	out.Media = mediaOf(f)
	out.Media.Data, out.Media.Body = nil, held
	return nil
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// heldMedia is a forward's media in its file, with the download slot the
// forward took: both are kept until the send has ended (send closes it),
// so that the slots bound the forwards from their download to the end of
// their upload.
type heldMedia struct {
	file    *whatsapp.MediaFile
	release func()
}

func (h *heldMedia) ReadAt(p []byte, off int64) (int, error) { return h.file.ReadAt(p, off) }
func (h *heldMedia) Size() int64                             { return h.file.Size() }

// replace makes file the media, closing the one it held.
func (h *heldMedia) replace(file *whatsapp.MediaFile) {
	h.file.Close()
	h.file = file
}

// Close closes the file and gives the slot back.
func (h *heldMedia) Close() error {
	err := h.file.Close()
	h.release()
	return err
}

// closeHeld closes the held media of a forward once its send has ended.
func closeHeld(md *whatsapp.Media) {
	if md == nil {
		return
	}
	if h, ok := md.Body.(*heldMedia); ok {
		h.Close()
	}
}

func mediaOf(f media.File) *whatsapp.Media {
	return &whatsapp.Media{
		Data: f.Data, Mimetype: f.Mimetype, FileName: f.FileName, Thumbnail: f.Thumbnail,
		Width: f.Width, Height: f.Height, Seconds: f.Seconds, Waveform: f.Waveform, Animated: f.Animated,
	}
}

// linkPreview is the preview of text's first URL, or nil: a preview that
// cannot be made within previewBudget never fails or holds up the send
// longer than that.
func (s *Service) linkPreview(ctx context.Context, sessionID, text string) *whatsapp.LinkPreview {
	if s.previews == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, previewBudget)
	defer cancel()
	p, err := s.previews.Preview(ctx, text)
	if err != nil {
		s.log.DebugContext(ctx, "a text goes without its link preview", "session_id", sessionID, "err", err)
		return nil
	}
	if p == nil {
		return nil
	}
	return &whatsapp.LinkPreview{
		URL: p.URL, MatchedText: p.MatchedText, Title: p.Title, Description: p.Description,
		Thumbnail: p.Thumbnail, ThumbWidth: uint32(p.ThumbnailWidth), ThumbHeight: uint32(p.ThumbnailHeight),
	}
}
