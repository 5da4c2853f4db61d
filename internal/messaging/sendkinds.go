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
	var f media.File
	switch m.Type {
	case TypeText:
		return nil
	case TypeImage, TypeVideo, TypeDocument, TypeAudio, "voice", TypeSticker:
		data, _, name, err := s.Media(ctx, sessionID, id)
		if err != nil {
			return err
		}
		switch m.Type {
		case TypeImage:
			f, err = s.prep.Image(ctx, data, name)
		case TypeVideo:
			f, err = s.prep.Video(ctx, data, name)
		case TypeDocument:
			f, err = s.prep.Document(ctx, data, name)
		case TypeSticker:
			f, err = s.prep.Sticker(ctx, data)
		default:
			out.Type, out.VoiceNote = TypeAudio, m.Type == "voice"
			f, err = s.prep.Audio(ctx, data, out.VoiceNote)
		}
		if err != nil {
			return fmt.Errorf("prepare the media of message %s again: %w", id, err)
		}
		out.Media = mediaOf(f)
		return nil
	}
	return fault.InvalidField("messageId", "messageId %s names a %s: texts, media and stickers can be forwarded", id, m.Type)
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
