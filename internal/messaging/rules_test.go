package messaging

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestSendRefused: each rule of a send refuses bad input with a fault
// naming the field and saying the rule, before anything is sent.
func TestSendRefused(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	text := func(set func(*Request)) Request {
		r := Request{Type: TypeText, Number: peerNumber, Text: "hi"}
		set(&r)
		return r
	}
	loc := func(lat, lng *float64, name, addr *string) Request {
		return Request{Type: TypeLocation, Number: peerNumber, Latitude: lat, Longitude: lng, Name: name, Address: addr}
	}
	card := func(c *Contact) Request { return Request{Type: TypeContact, Number: peerNumber, Contact: c} }
	pollOf := func(q string, sel *int, opts ...string) Request {
		return Request{Type: TypePoll, Number: peerNumber, Question: q, Options: opts, Selectable: sel}
	}
	long := func(n int) string { return strings.Repeat("a", n) }
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = peerNumber
		}
		return out
	}
	nan := math.NaN()
	tests := []struct {
		name  string
		req   Request
		code  fault.Code
		field string
		want  []string
	}{
		// What every kind shares.
		{"number empty", text(func(r *Request) { r.Number = " " }), fault.Invalid, "number", []string{"number must not be empty"}},
		{"number national", text(func(r *Request) { r.Number = "015550654321" }), fault.Invalid, "number", []string{"international format"}},
		{"delay negative", text(func(r *Request) { r.Delay = ptr(-1) }), fault.Invalid, "delay", []string{"delay must be between 0 and 86400 seconds (got -1)"}},
		{"delay past a day", text(func(r *Request) { r.Delay = ptr(MaxDelay + 1) }), fault.Invalid, "delay", []string{"(got 86401)"}},
		{"caption too long", Request{Type: TypeImage, Number: peerNumber, Source: "img", Caption: ptr(long(1025))}, fault.Invalid, "caption",
			[]string{"caption must be at most 1024 characters (got 1025)"}},
		{"caption not UTF-8", Request{Type: TypeImage, Number: peerNumber, Source: "img", Caption: ptr("\xff")}, fault.Invalid, "caption",
			[]string{"caption must be valid UTF-8"}},
		{"fileName too long", Request{Type: TypeDocument, Number: peerNumber, Source: "doc", FileName: ptr(long(256))}, fault.Invalid, "fileName",
			[]string{"fileName must be at most 255 characters (got 256)"}},
		{"too many mentions", text(func(r *Request) { r.Mentions = many(MaxMentions + 1) }), fault.Invalid, "mentions",
			[]string{"mentions must name at most 1024 users (got 1025)"}},
		{"mention of a group", text(func(r *Request) { r.Mentions = []string{peerNumber, groupJID} }), fault.Invalid, "mentions[1]",
			[]string{"mentions[1] must name a user, not a group"}},
		{"mention not a number", text(func(r *Request) { r.Mentions = []string{"someone"} }), fault.Invalid, "mentions[0]", []string{"mentions[0]"}},
		{"mention too long", text(func(r *Request) {
			r.Mentions = []string{peerNumber, "491709876543" + strings.Repeat(" ", 16<<10) + "@s.whatsapp.net"}
		}),
			fault.Invalid, "mentions[1]", []string{"mentions[1] must be at most 128 characters (got 16411)"}},
		{"quote unknown", text(func(r *Request) { r.Quoted = ptr("NOPE") }), fault.Invalid, "quoted",
			[]string{"quoted message NOPE is not in this session's message store"}},
		{"unknown kind", Request{Type: "hologram", Number: peerNumber}, fault.Internal, "", nil},

		// Texts.
		{"text empty", text(func(r *Request) { r.Text = " \n" }), fault.Invalid, "text", []string{"text must not be empty"}},
		{"text too long", text(func(r *Request) { r.Text = long(maxTextLen + 1) }), fault.Invalid, "text",
			[]string{"text must be at most 65536 characters (got 65537)"}},
		{"text not UTF-8", text(func(r *Request) { r.Text = "a\xc3" }), fault.Invalid, "text", []string{"text must be valid UTF-8"}},

		// Media and stickers: the source as the loader refuses it.
		{"image source", Request{Type: TypeImage, Number: peerNumber, Source: "missing"}, fault.Invalid, "source", []string{"source could not be loaded"}},
		{"sticker source", Request{Type: TypeSticker, Number: peerNumber, Source: "missing"}, fault.Invalid, "source", []string{"source"}},

		// Locations.
		{"latitude past 90", loc(ptr(90.5), ptr(0.0), nil, nil), fault.Invalid, "latitude", []string{"latitude must be between -90 and 90 (got 90.5)"}},
		{"latitude NaN", loc(&nan, ptr(0.0), nil, nil), fault.Invalid, "latitude", []string{"latitude must be between -90 and 90"}},
		{"longitude past -180", loc(ptr(0.0), ptr(-180.5), nil, nil), fault.Invalid, "longitude", []string{"longitude must be between -180 and 180 (got -180.5)"}},
		{"latitude alone", loc(ptr(1.0), nil, nil, nil), fault.Invalid, "longitude", []string{"longitude is missing: give both latitude and longitude, or an address"}},
		{"longitude alone", loc(nil, ptr(1.0), nil, nil), fault.Invalid, "latitude", []string{"latitude is missing"}},
		{"blank address alone", loc(nil, nil, nil, ptr("  ")), fault.Invalid, "latitude", []string{"a location needs latitude and longitude, or an address"}},
		{"nothing", loc(nil, nil, nil, nil), fault.Invalid, "latitude", []string{"a location needs latitude and longitude, or an address"}},
		{"name too long", loc(ptr(1.0), ptr(1.0), ptr(long(257)), nil), fault.Invalid, "name", []string{"name must be at most 256 characters (got 257)"}},
		{"address too long", loc(ptr(1.0), ptr(1.0), nil, ptr(long(257))), fault.Invalid, "address", []string{"address must be at most 256 characters"}},
		{"address not found", loc(nil, nil, nil, ptr("Atlantis")), fault.Invalid, "address", []string{"not found"}},

		// Contacts.
		{"contact missing", card(nil), fault.Invalid, "contact", []string{"contact is required"}},
		{"contact phone empty", card(&Contact{FirstName: "Ada"}), fault.Invalid, "contact.phoneNumber", []string{"contact.phoneNumber must not be empty"}},
		{"contact phone short", card(&Contact{PhoneNumber: "+49 123", FirstName: "Ada"}), fault.Invalid, "contact.phoneNumber",
			[]string{"contact.phoneNumber must be a phone number of 7 to 15 digits"}},
		{"contact first name blank", card(&Contact{PhoneNumber: peerNumber, FirstName: " "}), fault.Invalid, "contact.firstName",
			[]string{"contact.firstName must not be empty"}},
		{"contact last name too long", card(&Contact{PhoneNumber: peerNumber, FirstName: "Ada", LastName: long(257)}), fault.Invalid, "contact.lastName",
			[]string{"contact.lastName must be at most 256 characters"}},
		{"contact first name too long", card(&Contact{PhoneNumber: peerNumber, FirstName: long(257)}), fault.Invalid, "contact.firstName",
			[]string{"contact.firstName must be at most 256 characters"}},

		// Polls.
		{"question blank", pollOf(" ", nil, "a", "b"), fault.Invalid, "question", []string{"question must not be empty"}},
		{"question too long", pollOf(long(256), nil, "a", "b"), fault.Invalid, "question", []string{"question must be at most 255 characters (got 256)"}},
		{"one option", pollOf("q", nil, "a"), fault.Invalid, "options", []string{"options must list 2 to 12 options (got 1)"}},
		{"thirteen options", pollOf("q", nil, strings.Split("a b c d e f g h i j k l m", " ")...), fault.Invalid, "options", []string{"(got 13)"}},
		{"option blank", pollOf("q", nil, "a", " "), fault.Invalid, "options[1]", []string{"options[1] must not be empty"}},
		{"option too long", pollOf("q", nil, long(101), "b"), fault.Invalid, "options[0]", []string{"options[0] must be at most 100 characters (got 101)"}},
		{"option repeated", pollOf("q", nil, "a", "b", "a"), fault.Invalid, "options[2]", []string{`options[2] repeats options[0] ("a"): options must be distinct`}},
		// Look-alikes (issue 31): the same option to a reader.
		{"option fullwidth", pollOf("q", nil, "Yes", "No", "Ｙｅｓ"), fault.Invalid, "options[2]",
			[]string{`options[2] ("Ｙｅｓ") reads as options[0] ("Yes")`, "options must be distinct"}},
		{"option with a zero-width space", pollOf("q", nil, "Yes", "Y\u200bes"), fault.Invalid, "options[1]", []string{`reads as options[0] ("Yes")`}},
		{"option decomposed (NFD)", pollOf("q", nil, "Caf\u00e9", "Cafe\u0301"), fault.Invalid, "options[1]", []string{"reads as options[0]"}},
		{"option with spaces inside", pollOf("q", nil, "Ice cream", "Ice\u00a0 cream"), fault.Invalid, "options[1]", []string{"reads as options[0]"}},
		{"option with a right-to-left override", pollOf("q", nil, "a", "b\u202ec"), fault.Invalid, "options[1]",
			[]string{"options[1] must not contain bidirectional formatting characters (U+202E;"}},
		{"option with an isolate", pollOf("q", nil, "\u2066a\u2069", "b"), fault.Invalid, "options[0]", []string{"(U+2066;"}},
		{"option mixing Cyrillic into Latin", pollOf("q", nil, "paypal", "p\u0430ypal"), fault.Invalid, "options[1]",
			[]string{`options[1] mixes scripts in one word ("pаypal": Cyrillic and Latin)`}},
		{"option invisible", pollOf("q", nil, "a", "\u200b\u200d"), fault.Invalid, "options[1]", []string{"options[1] must hold a visible character"}},
		{"selectable negative", pollOf("q", ptr(-1), "a", "b"), fault.Invalid, "selectableCount",
			[]string{"selectableCount must be between 0 (any number) and the number of options, 2 (got -1)"}},
		{"selectable past the options", pollOf("q", ptr(3), "a", "b"), fault.Invalid, "selectableCount", []string{"(got 3)"}},

		// Forwards.
		{"forward of nothing", Request{Type: TypeForward, Number: peerNumber, Forward: " "}, fault.Invalid, "messageId", []string{"messageId must not be empty"}},
		{"forward unknown", Request{Type: TypeForward, Number: peerNumber, Forward: "NOPE"}, fault.NotFound, "", []string{"message NOPE not found"}},
		{"forward scheduled", Request{Type: TypeForward, Number: peerNumber, Forward: "SCHEDULED"}, fault.Conflict, "",
			[]string{"message SCHEDULED is scheduled: only a sent or received message can be forwarded"}},
		{"forward of a location", Request{Type: TypeForward, Number: peerNumber, Forward: "SENTLOC"}, fault.Invalid, "messageId",
			[]string{"messageId SENTLOC names a location: texts, media and stickers can be forwarded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(e.ops.sent)
			_, err := e.s.Send(ctx, "s1", tt.req)
			if tt.code == fault.Internal {
				if err == nil || !strings.Contains(err.Error(), "unknown send type") {
					t.Fatalf("err %v, want an unknown send type", err)
				}
			} else {
				wantFault(t, err, tt.code, tt.field, tt.want...)
			}
			if len(e.ops.sent) != before {
				t.Error("a refused send was sent")
			}
		})
	}
}

// TestSendAccepted: what each kind's rules make of a valid request.
func TestSendAccepted(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		req   Request
		check func(t *testing.T, e *rulesEnv)
	}{
		{"caption at its limit, counted in characters", Request{Type: TypeImage, Number: peerNumber, Source: "img", Caption: ptr(strings.Repeat("ü", maxCaptionLen))},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); len([]rune(out.Caption)) != maxCaptionLen || out.Media.Mimetype != "image/jpeg" {
					t.Errorf("caption of %d characters, media %+v", len([]rune(out.Caption)), out.Media)
				}
			}},
		{"image: no GIF playback, view once kept", Request{Type: TypeImage, Number: peerNumber, Source: "img", GIFPlayback: true, ViewOnce: true, FileName: ptr("a.png")},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.GIFPlayback || !out.ViewOnce || out.Media.FileName != "a.png" || string(out.Media.Data) != "img" {
					t.Errorf("sent %+v with %+v", out, out.Media)
				}
			}},
		{"video: GIF playback kept", Request{Type: TypeVideo, Number: peerNumber, Source: "vid", GIFPlayback: true},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); !out.GIFPlayback || out.Media.Mimetype != "video/mp4" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"document: never view once", Request{Type: TypeDocument, Number: peerNumber, Source: "doc", ViewOnce: true},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.ViewOnce || out.Media.Mimetype != "application/pdf" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"audio as a voice note", Request{Type: TypeAudio, Number: peerNumber, Source: "ogg", VoiceNote: true},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); !out.VoiceNote || len(out.Media.Waveform) == 0 {
					t.Errorf("sent %+v", out)
				}
			}},
		{"text without its preview", Request{Type: TypeText, Number: peerNumber, Text: "https://example.com", LinkPreview: ptr(false)},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.LinkPreview != nil || out.Text != "https://example.com" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"coordinates win over an address", Request{Type: TypeLocation, Number: peerNumber, Latitude: ptr(-90.0), Longitude: ptr(180.0), Address: ptr("Pariser Platz, Berlin")},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Latitude != -90 || out.Longitude != 180 || e.geo.lookups != 0 || out.Address != "Pariser Platz, Berlin" {
					t.Errorf("sent %+v after %d lookups", out, e.geo.lookups)
				}
			}},
		{"an address alone is looked up", Request{Type: TypeLocation, Number: peerNumber, Address: ptr("Pariser Platz, Berlin")},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Latitude != 52.5163 || out.Name != "Brandenburger Tor" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"a given name is kept", Request{Type: TypeLocation, Number: peerNumber, Address: ptr("Pariser Platz, Berlin"), Name: ptr("the gate")},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Name != "the gate" {
					t.Errorf("name %q", out.Name)
				}
			}},
		{"contact without a last name", Request{Type: TypeContact, Number: peerNumber, Contact: &Contact{PhoneNumber: "+49 1555 0654321", FirstName: "Ada"}},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.ContactName != "Ada" || !strings.Contains(out.VCard, "FN:Ada") {
					t.Errorf("sent %q %q", out.ContactName, out.VCard)
				}
			}},
		{"poll: one choice unless told", Request{Type: TypePoll, Number: peerNumber, Question: "q", Options: []string{"a", "b"}},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Text != "q" || out.Poll.Selectable != 1 || len(out.Poll.Options) != 2 {
					t.Errorf("sent %+v %+v", out, out.Poll)
				}
			}},
		{"poll: any number", Request{Type: TypePoll, Number: peerNumber, Question: "q", Options: []string{"a", "b"}, Selectable: ptr(0)},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Poll.Selectable != 0 {
					t.Errorf("selectable %d", out.Poll.Selectable)
				}
			}},
		// Options that only differ in ways a reader sees pass, sent as
		// given: the look-alike key is for comparing.
		{"poll: options that read differently, in any script", Request{Type: TypePoll, Number: peerNumber, Question: "q",
			Options: []string{"Caf\u00e9", "Cafe", "cafe", "Москва", "Tシャツ", "iPhone или Android", "👨‍👩‍👧", "Ice  cream"}},
			func(t *testing.T, e *rulesEnv) {
				want := []string{"Caf\u00e9", "Cafe", "cafe", "Москва", "Tシャツ", "iPhone или Android", "👨‍👩‍👧", "Ice  cream"}
				if out := e.ops.last(t); !slices.Equal(out.Poll.Options, want) {
					t.Errorf("sent options %q, want %q", out.Poll.Options, want)
				}
			}},
		{"sticker", Request{Type: TypeSticker, Number: peerNumber, Source: "webp"},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Type != TypeSticker || out.Media.Mimetype != "image/webp" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"forward of a text", Request{Type: TypeForward, Number: peerNumber, Forward: "RECEIVED"},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Type != TypeText || !out.Forwarded || out.Text != "stored RECEIVED" {
					t.Errorf("sent %+v", out)
				}
			}},
		{"quote of another chat's message", Request{Type: TypeText, Number: peerNumber, Text: "yes", Quoted: ptr("GROUPMSG")},
			func(t *testing.T, e *rulesEnv) {
				if q := e.ops.last(t).Quoted; q == nil || q.Chat.String() != groupJID || q.Sender.String() != peerJID || q.Text != "stored GROUPMSG" {
					t.Errorf("quote %+v", q)
				}
			}},
		{"delay 0 sends now", Request{Type: TypeText, Number: peerNumber, Text: "now", Delay: ptr(0)},
			func(t *testing.T, e *rulesEnv) {
				if out := e.ops.last(t); out.Text != "now" {
					t.Errorf("sent %+v", out)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.s.Send(ctx, "s1", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.ScheduledAt != nil {
				t.Fatalf("scheduled at %v, want sent now", res.ScheduledAt)
			}
			tt.check(t, e)
		})
	}
	t.Run("a day's delay is scheduled", func(t *testing.T) {
		res, err := e.s.Send(ctx, "s1", Request{Type: TypeText, Number: peerNumber, Text: "later", Delay: ptr(MaxDelay)})
		if err != nil {
			t.Fatal(err)
		}
		if res.ScheduledAt == nil || res.ScheduledAt.Sub(e.now) != MaxDelay*1e9 {
			t.Errorf("result %+v, want scheduled a day from now", res)
		}
	})
}
