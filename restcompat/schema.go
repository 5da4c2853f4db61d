package restcompat

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
)

// The named types below are the values several bodies and answers share.
// Each describes itself once (PrepareJSONSchema, read by the OpenAPI
// generator): every field of the type is then a $ref to that one
// description, as the hand-written document had it.

// phoneRule is how every number field reads a phone number
// (internal/phone's rules, in words).
const phoneRule = "Country code then number (7 to 15 digits in all); spaces, dashes, dots and parentheses are ignored, and so is a + before the first digit (+0… is refused); a leading 00 is the international prefix; a single leading 0 (a national number) is refused with 400, whose message starts with the field's name (e.g. participants[2]: use the international format…)."

// recipientLen is the longest number or JID a field takes
// (whatsapp.MaxRecipientLen).
const recipientLen = 128

// recipient is whom a send goes to: a number or any JID.
type recipient string

func (recipient) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithMaxLength(recipientLen).WithExamples("491701234567", "+49 170 1234567", "120363025246125888@g.us").
		WithDescription("The recipient: a phone number (" + phoneRule + "), or a full JID: a user (…@s.whatsapp.net), a LID (…@lid) or a group (…@g.us), with one @; at most 128 characters.")
	return nil
}

// user is a person: a number or a user JID, never a group.
type user string

func (user) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithMaxLength(recipientLen).WithExamples("491701234567").
		WithDescription("A user: a phone number (" + phoneRule + "), or a user JID (…@s.whatsapp.net or …@lid); not a group (400); at most 128 characters.")
	return nil
}

// phoneNumber is a number only, never a JID.
type phoneNumber string

func (phoneNumber) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithMaxLength(recipientLen).WithExamples("491701234567", "+49 170 1234567", "0049 170 1234567").
		WithDescription("A phone number: " + phoneRule + " Not a JID. At most 128 characters.")
	return nil
}

// source is media to send, by URL or inline.
type source string

func (source) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithExamples("https://example.com/files/menu.jpg").
		WithDescription("Media to send: an http(s) URL the server fetches (at most 5 redirects; loopback and private addresses are refused unless the server runs with --allow-private-urls), or base64 data (a data: URI prefix is tolerated). Size limits (413 beyond): what is fetched or decoded at most --max-body (default 64 MiB); an image at most 16 MiB, a video 64 MiB, audio 16 MiB, a document 100 MiB. A type WhatsApp cannot take is 415.")
	return nil
}

// delay is the seconds a scheduled send waits.
type delay int

func (delay) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinimum(0).WithMaximum(86400).
		WithDescription("Seconds before the send is made (0 sends now). A delayed send is stored and made even across a restart of the server. Whole seconds, 0 to 86400.")
	return nil
}

// mentions are the users a message mentions.
type mentions []user

func (mentions) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMaxItems(1024).WithDescription("Users to mention (at most 1024; numbers or user JIDs, not groups).")
	return nil
}

// strings is the list as the resolver takes it; nil stays nil (absent).
func (m mentions) strings() []string { return toStrings(m) }

// quoted is the id of a stored message a send quotes.
type quoted string

func (quoted) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithDescription("Id of a stored message of this session to quote (400 when this session's message store does not hold it). An empty string is the same as absent: no quote.")
	return nil
}

// caption is the text under a media message.
type caption string

func (caption) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMaxLength(1024).WithDescription("Caption under the media, at most 1024 characters.")
	return nil
}

// fileName is the name a recipient sees for a file.
type fileName string

func (fileName) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMaxLength(255).WithDescription("File name shown to the recipient, at most 255 characters.")
	return nil
}

// timestamp is a time as every answer writes it (model.FormatTime).
type timestamp string

func (timestamp) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithFormat("date-time").WithExamples("2026-01-02T03:04:09.000Z").WithDescription("RFC 3339 time.")
	return nil
}

// sessionStatus is a session's status, its values GraphQL's enum.
type sessionStatus string

func (sessionStatus) PrepareJSONSchema(s *jsonschema.Schema) error {
	var values []any
	for _, v := range model.AllSessionStatus {
		values = append(values, string(v))
	}
	s.WithEnum(values...).WithDescription("DISCONNECTED: not connected (new, or stopped). CONNECTING: connecting to WhatsApp. PAIRING: waiting for the phone to scan the QR code or enter the pairing code. CONNECTED: linked and online; sends work. LOGGED_OUT: the device was unlinked; connect again to link anew.")
	return nil
}

// webhookEvents is the selection of a webhook as answers show it: all
// selectable kinds in contract order, true when selected (MarshalJSON).
type webhookEvents []model.EventKind

func (webhookEvents) PrepareJSONSchema(s *jsonschema.Schema) error {
	eventKeys(s)
	for _, k := range events.Selectable() {
		s.Required = append(s.Required, string(k))
	}
	s.WithDescription("All 27 event keys, true when selected.")
	return nil
}

// webhookEventsInput is the selection a request gives: any selectable
// key, each a boolean (toInput checks both, naming the key).
type webhookEventsInput map[string]json.RawMessage

func (webhookEventsInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	eventKeys(s)
	s.WithDescription("The selection of events: exactly the keys given true are selected; an unknown key is 400 listing the valid keys.")
	return nil
}

// eventKeys makes s the closed object of the selectable event kinds, in
// the event table's order.
func eventKeys(s *jsonschema.Schema) {
	*s = jsonschema.Schema{}
	s.AddType(jsonschema.Object)
	s.WithAdditionalProperties(jsonschema.SchemaOrBool{TypeBoolean: new(bool)})
	for _, k := range events.Selectable() {
		s.WithPropertiesItem(string(k), jsonschema.Boolean.ToSchemaOrBool())
	}
}

// webhookHeadersInput is the extra headers a request gives: each value a
// string (toInput checks it, naming the header).
type webhookHeadersInput map[string]json.RawMessage

// forbiddenHeaders are the names a webhook may not set, in words and as
// the schema's pattern. The delivery sets the first ones; the rest belong
// to the connection.
var forbiddenHeaders = []string{"Content-Type", "Content-Length", "Host", "Connection", "Transfer-Encoding",
	"webhook-id", "webhook-timestamp", "webhook-signature", "TE", "Trailer", "Upgrade", "Keep-Alive", "Proxy-Connection"}

func (webhookHeadersInput) PrepareJSONSchema(s *jsonschema.Schema) error {
	*s = jsonschema.Schema{}
	s.AddType(jsonschema.Object)
	s.WithMaxProperties(32).
		WithDescription("Extra headers sent with each delivery: at most 32, names of 1 to 128 token characters, each name once (case-insensitive), values strings of at most 4096 bytes without control characters. " +
			strings.Join(forbiddenHeaders[:8], ", ") + " (set by the delivery) and " + strings.Join(forbiddenHeaders[8:], ", ") + " (belong to the connection) cannot be set.")
	var alts []string
	for _, h := range forbiddenHeaders {
		alts = append(alts, caseless(h))
	}
	names := (&jsonschema.Schema{}).WithPattern("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$").
		WithNot((&jsonschema.Schema{}).WithPattern("^(" + strings.Join(alts, "|") + ")$").ToSchemaOrBool())
	s.WithPropertyNames(names.ToSchemaOrBool())
	value := (&jsonschema.Schema{}).WithMaxLength(4096).WithPattern(noControl)
	value.AddType(jsonschema.String)
	s.WithAdditionalProperties(value.ToSchemaOrBool())
	return nil
}

// noControl is the pattern of a string without control characters.
const noControl = `^[^\u0000-\u001F\u007F]*$`

var letter = regexp.MustCompile(`[A-Za-z]`)

// caseless is a pattern matching s in any case (JSON Schema patterns have
// no flags).
func caseless(s string) string {
	return letter.ReplaceAllStringFunc(regexp.QuoteMeta(s), func(c string) string {
		return "[" + strings.ToUpper(c) + strings.ToLower(c) + "]"
	})
}

func toStrings[S ~string](xs []S) []string {
	if xs == nil {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
