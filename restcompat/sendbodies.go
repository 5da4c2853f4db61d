package restcompat

import (
	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/graph/model"
)

// The bodies of the sends. They are REST's own: a GraphQL input may
// change without changing the frozen contract, since input() is where the
// two meet. Fields keep the order of the contract, which the message
// naming the fields of a request lists.

type sendTextRequest struct {
	Number         recipient `json:"number" required:"true"`
	Text           string    `json:"text" required:"true" description:"The text; not blank, at most 65536 characters." minLength:"1" maxLength:"65536" pattern:"\\S"`
	Mentions       mentions  `json:"mentions,omitempty"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	LinkPreview    *bool     `json:"linkPreview,omitempty" description:"Default true: give the first http(s) URL of the text a preview (title, description, thumbnail), fetched within 3 s through the outbound address guard; a preview that cannot be made never fails the send."`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendTextRequest) input() model.SendTextInput {
	return model.SendTextInput{Number: string(b.Number), Text: b.Text, Mentions: b.Mentions.strings(), Quoted: (*string)(b.Quoted),
		Delay: (*int)(b.Delay), LinkPreview: b.LinkPreview, IdempotencyKey: b.IdempotencyKey}
}

type sendImageRequest struct {
	Number         recipient `json:"number" required:"true"`
	Source         source    `json:"source" required:"true"`
	FileName       *fileName `json:"fileName,omitempty"`
	Caption        *caption  `json:"caption,omitempty"`
	ViewOnce       *bool     `json:"viewOnce,omitempty" description:"Opened once by the recipient, then gone (WhatsApp's view-once)." default:"false"`
	Mentions       mentions  `json:"mentions,omitempty"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendImageRequest) input() model.SendImageInput {
	return model.SendImageInput{Number: string(b.Number), Source: string(b.Source), FileName: (*string)(b.FileName), Caption: (*string)(b.Caption),
		ViewOnce: b.ViewOnce, Mentions: b.Mentions.strings(), Quoted: (*string)(b.Quoted), Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
}

type sendVideoRequest struct {
	Number         recipient `json:"number" required:"true"`
	Source         source    `json:"source" required:"true"`
	FileName       *fileName `json:"fileName,omitempty"`
	Caption        *caption  `json:"caption,omitempty"`
	GifPlayback    *bool     `json:"gifPlayback,omitempty" description:"Play the video as a looping GIF."`
	ViewOnce       *bool     `json:"viewOnce,omitempty" description:"Opened once by the recipient, then gone (WhatsApp's view-once)." default:"false"`
	Mentions       mentions  `json:"mentions,omitempty"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendVideoRequest) input() model.SendVideoInput {
	return model.SendVideoInput{Number: string(b.Number), Source: string(b.Source), FileName: (*string)(b.FileName), Caption: (*string)(b.Caption),
		GifPlayback: b.GifPlayback, ViewOnce: b.ViewOnce, Mentions: b.Mentions.strings(), Quoted: (*string)(b.Quoted), Delay: (*int)(b.Delay),
		IdempotencyKey: b.IdempotencyKey}
}

type sendDocumentRequest struct {
	Number         recipient `json:"number" required:"true"`
	Source         source    `json:"source" required:"true"`
	FileName       *fileName `json:"fileName,omitempty"`
	Caption        *caption  `json:"caption,omitempty"`
	Mentions       mentions  `json:"mentions,omitempty"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendDocumentRequest) input() model.SendDocumentInput {
	return model.SendDocumentInput{Number: string(b.Number), Source: string(b.Source), FileName: (*string)(b.FileName), Caption: (*string)(b.Caption),
		Mentions: b.Mentions.strings(), Quoted: (*string)(b.Quoted), Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
}

type sendAudioRequest struct {
	Number         recipient `json:"number" required:"true"`
	Source         source    `json:"source" required:"true"`
	AsVoiceNote    *bool     `json:"asVoiceNote,omitempty" description:"Send as a push-to-talk voice note (OGG/Opus with a waveform)." default:"false"`
	ViewOnce       *bool     `json:"viewOnce,omitempty" description:"Opened once by the recipient, then gone (WhatsApp's view-once)." default:"false"`
	Mentions       mentions  `json:"mentions,omitempty"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendAudioRequest) input() model.SendAudioInput {
	return model.SendAudioInput{Number: string(b.Number), Source: string(b.Source), AsVoiceNote: b.AsVoiceNote, ViewOnce: b.ViewOnce,
		Mentions: b.Mentions.strings(), Quoted: (*string)(b.Quoted), Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
}

// sendLocationRequest is decoded as one object; the document describes its
// two valid shapes (JSONSchemaAnyOf).
type sendLocationRequest struct {
	Number         recipient `json:"number"`
	Latitude       *float64  `json:"latitude,omitempty"`
	Longitude      *float64  `json:"longitude,omitempty"`
	Address        *string   `json:"address,omitempty"`
	Name           *string   `json:"name,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty"`
	_              struct{}  `description:"Both coordinates, or an address (400 when neither); coordinates win when both are given."`
}

func (b sendLocationRequest) input() model.SendLocationInput {
	return model.SendLocationInput{Number: string(b.Number), Latitude: b.Latitude, Longitude: b.Longitude, Address: b.Address, Name: b.Name,
		Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
}

// The two shapes of a location body, for the document only.
type (
	sendLocationByCoordinates struct {
		Number         recipient `json:"number" required:"true"`
		Latitude       float64   `json:"latitude" required:"true" description:"Latitude in degrees, -90 to 90." minimum:"-90" maximum:"90"`
		Longitude      float64   `json:"longitude" required:"true" description:"Longitude in degrees, -180 to 180." minimum:"-180" maximum:"180"`
		Address        string    `json:"address,omitempty" description:"Address of the place, at most 256 characters; geocoded when no coordinates are given (422 when it cannot be, or no geocoder is configured)." maxLength:"256"`
		Name           string    `json:"name,omitempty" description:"Name of the place, at most 256 characters (with only an address, the geocoder's name of it when absent)." maxLength:"256"`
		Delay          *delay    `json:"delay,omitempty"`
		IdempotencyKey string    `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
		_              struct{}  `title:"By coordinates" description:"A location given by its coordinates (both required); an address given too is shown but not geocoded."`
	}
	sendLocationByAddress struct {
		Number         recipient `json:"number" required:"true"`
		Address        string    `json:"address" required:"true" description:"Address of the place, at most 256 characters; geocoded when no coordinates are given (422 when it cannot be, or no geocoder is configured)." minLength:"1" maxLength:"256" pattern:"\\S"`
		Name           string    `json:"name,omitempty" description:"Name of the place, at most 256 characters (with only an address, the geocoder's name of it when absent)." maxLength:"256"`
		Delay          *delay    `json:"delay,omitempty"`
		IdempotencyKey string    `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
		_              struct{}  `title:"By address" description:"A location given by its address only, which the server geocodes."`
	}
)

func (sendLocationRequest) JSONSchemaAnyOf() []any {
	return []any{sendLocationByCoordinates{}, sendLocationByAddress{}}
}

// PrepareJSONSchema leaves only the two shapes: the one object decoded
// is no third shape a client may send.
func (sendLocationRequest) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.Type, s.Properties, s.Required = nil, nil, nil
	return nil
}

type contactCard struct {
	PhoneNumber phoneNumber `json:"phoneNumber" required:"true" description:"The contact's phone number."`
	FirstName   string      `json:"firstName" required:"true" description:"Not blank, at most 256 characters." minLength:"1" maxLength:"256" pattern:"\\S"`
	LastName    *string     `json:"lastName,omitempty" description:"At most 256 characters." maxLength:"256"`
	_           struct{}    `description:"The contact card (vCard) to send."`
}

type sendContactRequest struct {
	Number         recipient    `json:"number" required:"true"`
	Contact        *contactCard `json:"contact" required:"true"`
	Delay          *delay       `json:"delay,omitempty"`
	IdempotencyKey *string      `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendContactRequest) input() model.SendContactInput {
	in := model.SendContactInput{Number: string(b.Number), Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
	if c := b.Contact; c != nil {
		in.Contact = &model.ContactInput{PhoneNumber: string(c.PhoneNumber), FirstName: c.FirstName, LastName: c.LastName}
	}
	return in
}

type sendPollRequest struct {
	Number          recipient    `json:"number" required:"true"`
	Question        string       `json:"question" required:"true" description:"The question; not blank, at most 255 characters." minLength:"1" maxLength:"255" pattern:"\\S"`
	Options         []pollChoice `json:"options" required:"true" description:"2 to 12 options of up to 100 characters, distinct as read (compared in NFKC, invisible characters dropped, runs of spaces as one), without bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069) or a word mixing scripts." minItems:"2" maxItems:"12" uniqueItems:"true"`
	SelectableCount *int         `json:"selectableCount,omitempty" description:"How many options a voter may choose: 1 when absent; 0 lets them choose any number; at most the number of options." minimum:"0" maximum:"12"`
	Delay           *delay       `json:"delay,omitempty"`
	IdempotencyKey  *string      `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
}

func (b sendPollRequest) input() model.SendPollInput {
	return model.SendPollInput{Number: string(b.Number), Question: b.Question, Options: toStrings(b.Options), SelectableCount: b.SelectableCount,
		Delay: (*int)(b.Delay), IdempotencyKey: b.IdempotencyKey}
}

type sendStickerRequest struct {
	Number         recipient `json:"number" required:"true"`
	Source         source    `json:"source" required:"true"`
	Quoted         *quoted   `json:"quoted,omitempty"`
	Delay          *delay    `json:"delay,omitempty"`
	IdempotencyKey *string   `json:"idempotencyKey,omitempty" minLength:"1" maxLength:"255" description:"Same as the Idempotency-Key header: the send is made once per key within 24 hours."`
	_              struct{}  `description:"source is a PNG, JPEG, GIF or WebP image; a 512×512 WebP is sent, animated when the source is."`
}

func (b sendStickerRequest) input() model.SendStickerInput {
	return model.SendStickerInput{Number: string(b.Number), Source: string(b.Source), Quoted: (*string)(b.Quoted), Delay: (*int)(b.Delay),
		IdempotencyKey: b.IdempotencyKey}
}

// pollChoice is one answer a poll offers a voter.
type pollChoice string

func (pollChoice) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithMaxLength(100).WithPattern(`\S`).WithDescription("An option: not blank, at most 100 characters.")
	return nil
}
