package messaging

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// Request is one send as both APIs take it. Field names in errors are the
// contract's (number, source, latitude, contact.phoneNumber, …).
type Request struct {
	Type        string // a kind's Name (KindTable)
	Number      string
	Text        string
	Source      string
	FileName    *string
	Caption     *string
	GIFPlayback bool
	ViewOnce    bool // image, video, audio
	VoiceNote   bool
	Latitude    *float64
	Longitude   *float64
	Address     *string
	Name        *string
	Contact     *Contact
	Mentions    []string
	Quoted      *string
	Delay       *int
	// LinkPreview, when not false, gives a text's first URL a preview.
	LinkPreview *bool
	// Question, Options and Selectable are a poll's (Selectable nil: 1).
	Question   string
	Options    []string
	Selectable *int
	// Forward is the stored message a forward sends again.
	Forward string
	// IdempotencyKey, when set, makes the send once however often it is
	// asked for with that key within KeyTTL (sendkey.go).
	IdempotencyKey string
}

// Contact is the card of a contact send.
type Contact struct {
	PhoneNumber string
	FirstName   string
	LastName    string
}

// Limits of the fields (WhatsApp's own, where it has one).
const (
	MaxDelay       = 86400 // seconds: a day
	maxTextLen     = 65536 // WhatsApp cuts longer texts
	maxCaptionLen  = 1024
	maxFileNameLen = 255
	maxNameLen     = 256
	// MaxMentions bounds the users one message mentions; each is a
	// recipient, at most whatsapp.MaxRecipientLen characters.
	MaxMentions = 1024
)

// prepare validates req and turns it into what the manager sends, with its
// media loaded and prepared: the rules every kind shares, then that the
// session is connected, then its kind's own rules (KindTable), which load
// sources, fetch link previews and decode images; a pure kind's rules,
// which do none of that, come before the session's state. The delay is
// returned apart.
func (s *Service) prepare(ctx context.Context, sessionID string, req Request) (whatsapp.Outgoing, int, error) {
	out := whatsapp.Outgoing{Type: req.Type}
	to, err := whatsapp.ParseRecipient("number", req.Number)
	if err != nil {
		return out, 0, err
	}
	out.To = to
	delay := 0
	if req.Delay != nil {
		delay = *req.Delay
		if delay < 0 || delay > MaxDelay {
			return out, 0, fault.InvalidField("delay", "delay must be between 0 and %d seconds (got %d)", MaxDelay, delay)
		}
	}
	if err := checkText("caption", req.Caption, maxCaptionLen); err != nil {
		return out, 0, err
	}
	if req.Caption != nil {
		out.Caption = *req.Caption
	}
	if err := checkText("fileName", req.FileName, maxFileNameLen); err != nil {
		return out, 0, err
	}
	if err := s.mentionsAndQuote(ctx, sessionID, req, &out); err != nil {
		return out, 0, err
	}
	k, ok := lookupKind(req.Type)
	if !ok {
		return out, 0, fmt.Errorf("messaging: unknown send type %q", req.Type)
	}
	if k.pure {
		if err := k.prepare(s, ctx, sessionID, req, &out); err != nil {
			return out, 0, err
		}
	}
	if err := s.connected(ctx, sessionID); err != nil {
		return out, 0, notConnected{err}
	}
	if !k.pure {
		if err := k.prepare(s, ctx, sessionID, req, &out); err != nil {
			return out, 0, err
		}
	}
	return out, delay, nil
}

// connected refuses a send from a session that is not CONNECTED before
// anything of it is loaded, fetched or decoded (its source, its link
// preview, a forward's media): the session would refuse it after all that
// work. 24 texts whose page's image was a decompression bomb took a
// never-linked session's process from 56 to 2,640 MiB, each answered
// NOT_CONNECTED. A scheduled send is refused too: what it would store is
// made now.
func (s *Service) connected(ctx context.Context, sessionID string) error {
	st, err := whatsapp.OpStatus().Do(ctx, s.wa, sessionID, whatsapp.None{})
	if err != nil {
		return err
	}
	if st.Status != whatsapp.StatusConnected {
		return fault.New(fault.NotConnected, "session %s is not connected (status: %s)", sessionID, st.Status)
	}
	return nil
}

// notConnected is prepare's refusal of a send from a session that is not
// connected: a failed send, as the session's own refusal was.
type notConnected struct{ error }

func (e notConnected) Unwrap() error { return e.error }

// text applies a text's rules and makes its link preview.
func (s *Service) text(ctx context.Context, sessionID string, req Request, out *whatsapp.Outgoing) error {
	if strings.TrimSpace(req.Text) == "" {
		return fault.InvalidField("text", "text must not be empty")
	}
	if err := checkText("text", &req.Text, maxTextLen); err != nil {
		return err
	}
	out.Text = req.Text
	if req.LinkPreview == nil || *req.LinkPreview {
		out.LinkPreview = s.linkPreview(ctx, sessionID, req.Text)
	}
	return nil
}

func (s *Service) mentionsAndQuote(ctx context.Context, sessionID string, req Request, out *whatsapp.Outgoing) error {
	if len(req.Mentions) > MaxMentions {
		return fault.InvalidField("mentions", "mentions must name at most %d users (got %d)", MaxMentions, len(req.Mentions))
	}
	for i, m := range req.Mentions {
		field := fmt.Sprintf("mentions[%d]", i)
		jid, err := whatsapp.ParseRecipient(field, m)
		if err != nil {
			return err
		}
		if jid.Server == "g.us" {
			return fault.InvalidField(field, "%s must name a user, not a group", field)
		}
		out.Mentions = append(out.Mentions, jid)
	}
	// An empty quoted is no quote: client generators (genqlient, some
	// OpenAPI ones) send "" for an optional string they were not given.
	if req.Quoted == nil || strings.TrimSpace(*req.Quoted) == "" {
		return nil
	}
	q, err := s.Get(ctx, sessionID, *req.Quoted)
	if err != nil {
		if isNotFound(err) {
			return fault.InvalidField("quoted", "quoted message %s is not in this session's message store", fault.Clip(*req.Quoted, fault.QuoteLen))
		}
		return err
	}
	sender, err := whatsapp.ParseJID(q.Sender)
	if err != nil {
		return fmt.Errorf("stored sender of message %s: %w", q.MessageID, err)
	}
	chat, err := whatsapp.ParseJID(q.Chat)
	if err != nil {
		return fmt.Errorf("stored chat of message %s: %w", q.MessageID, err)
	}
	text := q.Text
	if text == "" {
		text = q.Caption
	}
	out.Quoted = &whatsapp.Quote{ID: q.MessageID, Sender: sender, Chat: chat, Text: text}
	return nil
}

// location applies rest.md's rules: coordinates, or an address to geocode;
// coordinates win when both are given.
func (s *Service) location(ctx context.Context, _ string, req Request, out *whatsapp.Outgoing) error {
	if err := checkText("name", req.Name, maxNameLen); err != nil {
		return err
	}
	if err := checkText("address", req.Address, maxNameLen); err != nil {
		return err
	}
	if req.Name != nil {
		out.Name = *req.Name
	}
	if req.Address != nil {
		out.Address = *req.Address
	}
	hasAddress := req.Address != nil && strings.TrimSpace(*req.Address) != ""
	switch {
	case req.Latitude != nil && req.Longitude != nil:
		lat, lng := *req.Latitude, *req.Longitude
		if math.IsNaN(lat) || lat < -90 || lat > 90 {
			return fault.InvalidField("latitude", "latitude must be between -90 and 90 (got %v)", lat)
		}
		if math.IsNaN(lng) || lng < -180 || lng > 180 {
			return fault.InvalidField("longitude", "longitude must be between -180 and 180 (got %v)", lng)
		}
		out.Latitude, out.Longitude = lat, lng
	case (req.Latitude != nil || req.Longitude != nil) && !hasAddress:
		missing := "longitude"
		if req.Latitude == nil {
			missing = "latitude"
		}
		return fault.InvalidField(missing, "%s is missing: give both latitude and longitude, or an address", missing)
	case hasAddress:
		p, err := s.geo.Lookup(ctx, *req.Address)
		if err != nil {
			return err
		}
		out.Latitude, out.Longitude = p.Latitude, p.Longitude
		if out.Name == "" {
			out.Name = p.Name
		}
	default:
		return fault.InvalidField("latitude", "a location needs latitude and longitude, or an address")
	}
	return nil
}

func contact(c *Contact, out *whatsapp.Outgoing) error {
	if c == nil {
		return fault.InvalidField("contact", "contact is required")
	}
	phone, err := whatsapp.ParsePhone("contact.phoneNumber", c.PhoneNumber)
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.FirstName) == "" {
		return fault.InvalidField("contact.firstName", "contact.firstName must not be empty")
	}
	for field, v := range map[string]string{"contact.firstName": c.FirstName, "contact.lastName": c.LastName} {
		if err := checkText(field, &v, maxNameLen); err != nil {
			return err
		}
	}
	out.ContactName = strings.TrimSpace(c.FirstName + " " + c.LastName)
	out.VCard = whatsapp.VCard(phone, c.FirstName, c.LastName)
	return nil
}

// checkText bounds an optional text field and refuses invalid UTF-8.
func checkText(field string, v *string, max int) error {
	if v == nil {
		return nil
	}
	if !utf8.ValidString(*v) {
		return fault.InvalidField(field, "%s must be valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(*v); n > max {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", field, max, n)
	}
	return nil
}
