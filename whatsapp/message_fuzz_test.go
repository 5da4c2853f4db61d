package whatsapp

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// messageTypes are events.md's types of a message ("" is no chat message:
// nothing is published for it).
var messageTypes = []string{"", "text", "image", "video", "audio", "voice", "document", "sticker",
	"location", "contact", "reaction", "poll", "revoke", "edit", "unknown"}

// FuzzMessageEvent: whatever protobuf a peer sends as a message, reading it
// (contentOf) and shaping its event (describe) never panic, the event's data
// always encodes as JSON, and its type is one of events.md's.
func FuzzMessageEvent(f *testing.F) {
	lat, lng := 52.52, 13.40
	for _, m := range []*waE2E.Message{
		{Conversation: proto.String("hello")},
		{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("hi @1"), ContextInfo: &waE2E.ContextInfo{
			StanzaID: proto.String("Q1"), MentionedJID: []string{"1234567@s.whatsapp.net"}}}},
		{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("c"), Mimetype: proto.String("image/jpeg"), FileLength: proto.Uint64(10),
			URL: proto.String("https://mmg.whatsapp.net/x"), DirectPath: proto.String("/x"), MediaKey: []byte{1}}},
		{AudioMessage: &waE2E.AudioMessage{PTT: proto.Bool(true)}},
		{DocumentMessage: &waE2E.DocumentMessage{FileName: proto.String("a.pdf")}},
		{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: &lat, DegreesLongitude: &lng, Name: proto.String("Berlin")}},
		{LiveLocationMessage: &waE2E.LiveLocationMessage{DegreesLatitude: proto.Float64(math.Inf(1)), DegreesLongitude: &lng}},
		{ContactsArrayMessage: &waE2E.ContactsArrayMessage{Contacts: []*waE2E.ContactMessage{{Vcard: proto.String("BEGIN:VCARD")}}}},
		{PollCreationMessageV3: &waE2E.PollCreationMessage{Name: proto.String("p"), Options: []*waE2E.PollCreationMessage_Option{{OptionName: proto.String("a")}, {OptionName: proto.String("b")}}}},
		{ReactionMessage: &waE2E.ReactionMessage{Text: proto.String("👍")}},
		{ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(),
			EditedMessage: &waE2E.Message{Conversation: proto.String("edited")}}},
		{ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_REVOKE.Enum()}},
		{MessageContextInfo: &waE2E.MessageContextInfo{}},
		{ButtonsMessage: &waE2E.ButtonsMessage{}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	info := &types.MessageInfo{
		MessageSource: types.MessageSource{Chat: types.NewJID("1234567", types.DefaultUserServer)},
		ID:            "ABC", PushName: "p", Timestamp: time.Unix(1_700_000_000, 0),
	}
	sender := person{pn: types.NewJID("1234567", types.DefaultUserServer), lid: types.NewJID("7654321", types.HiddenUserServer)}
	f.Fuzz(func(t *testing.T, b []byte) {
		var msg waE2E.Message
		if proto.Unmarshal(b, &msg) != nil {
			return
		}
		c := contentOf(&msg)
		if !slices.Contains(messageTypes, c.typ) {
			t.Fatalf("type %q is none of events.md's", c.typ)
		}
		_, d := describe(info, info.Chat, sender, c)
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("the data of a %q message does not encode: %v", c.typ, err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
	})
}
