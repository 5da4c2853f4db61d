package messaging

// The kinds of sends, each described once: its name, its rules, the
// adapter's builders of its message, its transports' names and a sample.
// What else knows the kinds derives from this table: the known kinds of
// the metrics (Kinds), the stored form of a scheduled send (the JSON of
// whatsapp.Outgoing, schedule.go), and kinds_test.go walks every entry
// (its sample stored and read back, built by the adapter, counted by the
// metrics; restcompat's and graph's tests find its route and mutation).

import (
	"bytes"
	"context"

	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp"
)

// The kinds of sends: Request.Type, and their label in the metrics.
const (
	TypeText     = "text"
	TypeImage    = "image"
	TypeVideo    = "video"
	TypeDocument = "document"
	TypeAudio    = "audio"
	TypeLocation = "location"
	TypeContact  = "contact"
	TypePoll     = "poll"
	TypeSticker  = "sticker"
	TypeForward  = "forward" // a stored message sent again, marked forwarded
)

// Kind is one kind of send.
type Kind struct {
	// Name is the kind's Request.Type, the Outgoing.Type of what it sends
	// (but for a forward) and its label in the metrics of sends.
	Name string
	// Mutation is the GraphQL mutation that sends it; the REST route
	// calling it has it as its operationId.
	Mutation string
	// Route is its REST route under /api/v1, as METHOD PATH.
	Route string
	// Builders are the adapter's builders of its messages
	// (whatsapp.Builders): its own name, or for a forward those of the
	// kinds it forwards.
	Builders []string
	// Sample is a message of the kind with every field it carries set:
	// what the tests store as a scheduled send and have the adapter build,
	// so that a kind is not added without them.
	Sample func() whatsapp.Outgoing
	// prepare applies the kind's own rules to req and fills out; the rules
	// every kind shares (number, delay, caption, fileName, mentions,
	// quoted) are applied before it.
	prepare func(s *Service, ctx context.Context, sessionID string, req Request, out *whatsapp.Outgoing) error
	// pure says prepare only judges and copies fields: it loads, fetches
	// and decodes nothing, so its rules are applied before the session's
	// state is asked, and bad input is refused naming its field whether
	// the session is connected or not.
	pure bool
}

// KindTable is every kind of send.
func KindTable() []Kind {
	return []Kind{
		{Name: TypeText, Mutation: "sendText", Route: "POST /session/{sessionId}/message/text", Builders: []string{TypeText},
			prepare: (*Service).text, Sample: func() whatsapp.Outgoing {
				return sample(TypeText, func(o *whatsapp.Outgoing) {
					o.Text = "see https://example.com @4915550000002"
					o.LinkPreview = &whatsapp.LinkPreview{URL: "https://example.com/", MatchedText: "https://example.com", Title: "Example",
						Description: "An example", Thumbnail: []byte{0xff, 0xd8}, ThumbWidth: 100, ThumbHeight: 50}
				})
			}},
		{Name: TypeImage, Mutation: "sendImage", Route: "POST /session/{sessionId}/message/image", Builders: []string{TypeImage},
			prepare: mediaRule(func(s *Service, ctx context.Context, data []byte, req Request) (media.File, error) {
				return s.prep.Image(ctx, data, valueOf(req.FileName))
			}),
			Sample: func() whatsapp.Outgoing {
				return sample(TypeImage, func(o *whatsapp.Outgoing) {
					o.Caption, o.ViewOnce = "a picture", true
					o.Media = &whatsapp.Media{Data: []byte("\x89PNG"), Mimetype: "image/jpeg", FileName: "a.jpg", Thumbnail: []byte{0xff, 0xd8}, Width: 640, Height: 480}
				})
			}},
		{Name: TypeVideo, Mutation: "sendVideo", Route: "POST /session/{sessionId}/message/video", Builders: []string{TypeVideo},
			prepare: mediaRule(func(s *Service, ctx context.Context, data []byte, req Request) (media.File, error) {
				return s.prep.Video(ctx, data, valueOf(req.FileName))
			}),
			Sample: func() whatsapp.Outgoing {
				return sample(TypeVideo, func(o *whatsapp.Outgoing) {
					o.Caption, o.GIFPlayback, o.ViewOnce = "a film", true, true
					o.Media = &whatsapp.Media{Data: []byte("ftypmp4"), Mimetype: "video/mp4", Thumbnail: []byte{0xff, 0xd8}, Width: 320, Height: 240, Seconds: 3}
				})
			}},
		{Name: TypeDocument, Mutation: "sendDocument", Route: "POST /session/{sessionId}/message/document", Builders: []string{TypeDocument},
			prepare: mediaRule(func(s *Service, ctx context.Context, data []byte, req Request) (media.File, error) {
				return s.prep.Document(ctx, data, valueOf(req.FileName))
			}),
			Sample: func() whatsapp.Outgoing {
				return sample(TypeDocument, func(o *whatsapp.Outgoing) {
					o.Caption = "the minutes"
					o.Media = &whatsapp.Media{Data: []byte("%PDF-1.4"), Mimetype: "application/pdf", FileName: "minutes.pdf", Thumbnail: []byte{0xff, 0xd8}}
				})
			}},
		{Name: TypeAudio, Mutation: "sendAudio", Route: "POST /session/{sessionId}/message/audio", Builders: []string{TypeAudio},
			prepare: mediaRule(func(s *Service, ctx context.Context, data []byte, req Request) (media.File, error) {
				return s.prep.Audio(ctx, data, req.VoiceNote)
			}),
			Sample: func() whatsapp.Outgoing {
				return sample(TypeAudio, func(o *whatsapp.Outgoing) {
					o.VoiceNote, o.ViewOnce = true, true
					o.Media = &whatsapp.Media{Data: []byte("OggS"), Mimetype: "audio/ogg; codecs=opus", Seconds: 7, Waveform: []byte{0, 50, 100}}
				})
			}},
		{Name: TypeLocation, Mutation: "sendLocation", Route: "POST /session/{sessionId}/message/location", Builders: []string{TypeLocation},
			prepare: (*Service).location, Sample: func() whatsapp.Outgoing {
				return sample(TypeLocation, func(o *whatsapp.Outgoing) {
					o.Latitude, o.Longitude, o.Name, o.Address = 52.5163, 13.3777, "Brandenburger Tor", "Pariser Platz, Berlin"
				})
			}},
		{Name: TypeContact, Mutation: "sendContact", Route: "POST /session/{sessionId}/message/contact", Builders: []string{TypeContact},
			pure: true, prepare: func(_ *Service, _ context.Context, _ string, req Request, out *whatsapp.Outgoing) error {
				return contact(req.Contact, out)
			},
			Sample: func() whatsapp.Outgoing {
				return sample(TypeContact, func(o *whatsapp.Outgoing) {
					o.ContactName, o.VCard = "Ada Lovelace", whatsapp.VCard("4915550000003", "Ada", "Lovelace")
				})
			}},
		{Name: TypePoll, Mutation: "sendPoll", Route: "POST /session/{sessionId}/message/poll", Builders: []string{TypePoll},
			pure: true, prepare: func(_ *Service, _ context.Context, _ string, req Request, out *whatsapp.Outgoing) error {
				return poll(req, out)
			},
			Sample: func() whatsapp.Outgoing {
				return sample(TypePoll, func(o *whatsapp.Outgoing) {
					o.Text, o.Poll = "Welcher Tag?", &whatsapp.PollSpec{Options: []string{"Mo", "Di", "Mi"}, Selectable: 2}
				})
			}},
		{Name: TypeSticker, Mutation: "sendSticker", Route: "POST /session/{sessionId}/message/sticker", Builders: []string{TypeSticker},
			prepare: func(s *Service, ctx context.Context, _ string, req Request, out *whatsapp.Outgoing) error {
				return s.sticker(ctx, req.Source, out)
			},
			Sample: func() whatsapp.Outgoing {
				return sample(TypeSticker, func(o *whatsapp.Outgoing) {
					o.Media = &whatsapp.Media{Data: []byte("RIFFWEBP"), Mimetype: "image/webp", Width: 512, Height: 512, Animated: true}
				})
			}},
		{Name: TypeForward, Mutation: "forwardMessage", Route: "POST /session/{sessionId}/message/{messageId}/forward",
			Builders: []string{TypeText, TypeImage, TypeVideo, TypeDocument, TypeAudio, TypeSticker},
			prepare: func(s *Service, ctx context.Context, sessionID string, req Request, out *whatsapp.Outgoing) error {
				return s.forward(ctx, sessionID, req.Forward, out)
			},
			Sample: func() whatsapp.Outgoing {
				return sample(TypeImage, func(o *whatsapp.Outgoing) {
					o.Caption, o.Forwarded = "seen before", true
					// A forward's media is kept out of memory (in a file).
					o.Media = &whatsapp.Media{Body: bytes.NewReader([]byte("\x89PNG")), Mimetype: "image/png", Width: 2, Height: 2}
				})
			}},
	}
}

// lookupKind is the kind named name.
func lookupKind(name string) (Kind, bool) {
	for _, k := range KindTable() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Kinds lists the names of the kinds of sends: the label values of the
// metrics of sends.
func Kinds() []string {
	var names []string
	for _, k := range KindTable() {
		names = append(names, k.Name)
	}
	return names
}

// sample is a message of type typ to a user, mentioning one and quoting a
// message of another chat, changed by set.
func sample(typ string, set func(*whatsapp.Outgoing)) whatsapp.Outgoing {
	to, _ := whatsapp.ParseJID("4915550000001@s.whatsapp.net")
	other, _ := whatsapp.ParseJID("4915550000002@s.whatsapp.net")
	group, _ := whatsapp.ParseJID("120363000000000001@g.us")
	out := whatsapp.Outgoing{Type: typ, To: to, Mentions: []whatsapp.JID{other},
		Quoted: &whatsapp.Quote{ID: "3EB0QUOTED", Sender: other, Chat: group, Text: "the question"}}
	set(&out)
	return out
}

// mediaRule is the rule of a kind of media: its source loaded, prepared by
// prepare, and the flags that kind takes.
func mediaRule(prepare func(s *Service, ctx context.Context, data []byte, req Request) (media.File, error)) func(*Service, context.Context, string, Request, *whatsapp.Outgoing) error {
	return func(s *Service, ctx context.Context, _ string, req Request, out *whatsapp.Outgoing) error {
		data, err := s.loader.Load(ctx, "source", req.Source)
		if err != nil {
			return err
		}
		f, err := prepare(s, ctx, data, req)
		if err != nil {
			return err
		}
		out.Media = mediaOf(f)
		out.GIFPlayback = req.Type == TypeVideo && req.GIFPlayback
		out.ViewOnce = req.ViewOnce && req.Type != TypeDocument
		out.VoiceNote = req.Type == TypeAudio && req.VoiceNote
		return nil
	}
}

func valueOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// KeyedSend is an operation of the API that sends a message: its GraphQL
// mutation (answering a SendResult) and REST route (METHOD PATH, answering
// the send's result). Each takes an idempotency key (the mutation's
// idempotencyKey, the REST Idempotency-Key header), with which it sends
// once however often it is asked.
type KeyedSend struct {
	Mutation string
	Route    string
}

// KeyedSends lists every operation that sends a message: each kind of send
// (KindTable), and the sends made apart from a Request: a reaction, an
// edit and a group's invitation. graph's and restcompat's tests hold the
// schema and the routes to it (every mutation answering a SendResult is
// here, each takes the key), and internal/e2e tries each one that is not a
// kind.
func KeyedSends() []KeyedSend {
	var out []KeyedSend
	for _, k := range KindTable() {
		out = append(out, KeyedSend{Mutation: k.Mutation, Route: k.Route})
	}
	return append(out,
		KeyedSend{Mutation: "sendReaction", Route: "POST /session/{sessionId}/message/{messageId}/reaction"},
		KeyedSend{Mutation: "editMessage", Route: "PUT /session/{sessionId}/message/{messageId}"},
		KeyedSend{Mutation: "sendGroupInvite", Route: "POST /session/{sessionId}/group/{jid}/send-invite"},
	)
}
