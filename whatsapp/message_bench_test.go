package whatsapp

import (
	"encoding/json"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// BenchmarkMessageEvent: what a received message costs before it reaches
// the event log: its content read (contentOf), its record and event data
// made (describe) and the data encoded, for a text and an image whose
// attachment can be downloaded (so a MediaRef is built).
func BenchmarkMessageEvent(b *testing.B) {
	chat := types.NewJID("491701234567", types.DefaultUserServer)
	sender := person{pn: chat, lid: types.NewJID("123456789012345", types.HiddenUserServer)}
	info := &types.MessageInfo{
		MessageSource: types.MessageSource{Chat: chat, Sender: chat},
		ID:            "3EB0C767D26A1D3A3F8E", PushName: "Anna", Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	msgs := []struct {
		name string
		msg  *waE2E.Message
	}{
		{"text", &waE2E.Message{Conversation: proto.String("Bis morgen um zehn am Bahnhof?")}},
		{"image", &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
			Caption: proto.String("Der Blick vom Turm"), Mimetype: proto.String("image/jpeg"),
			URL:        proto.String("https://mmg.whatsapp.net/v/t62.7118-24/12345_67890_n.enc"),
			DirectPath: proto.String("/v/t62.7118-24/12345_67890_n.enc?ccb=11-4&oh=01_Q5AaI&oe=6812ABCD&_nc_sid=5e03e0"),
			MediaKey:   make([]byte, 32), FileSHA256: make([]byte, 32), FileEncSHA256: make([]byte, 32),
			FileLength: proto.Uint64(183_406), Height: proto.Uint32(1280), Width: proto.Uint32(960),
			ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String("3EB0AAAA"), MentionedJID: []string{"491709876543@s.whatsapp.net"}},
		}}},
	}
	for _, m := range msgs {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := contentOf(m.msg)
				_, d := describe(info, chat, sender, c)
				if _, err := json.Marshal(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
