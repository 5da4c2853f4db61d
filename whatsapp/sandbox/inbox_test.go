package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// inboxStep: the linked client sends the contact one message of each kind
// (uploading the media for real), then a revoke of one of them; the
// contact's inbox shows each as its phone decrypted it, the revoked one
// marked. The result is the inbox with message ids replaced by labels.
func inboxStep(t *testing.T, ctx context.Context, e *env) (any, error) {
	to := types.NewJID(contact, types.DefaultUserServer)
	upload := func(data []byte, mt whatsmeow.MediaType) whatsmeow.UploadResponse {
		up, err := e.cli.Upload(ctx, data, mt)
		if err != nil {
			t.Fatalf("upload: %v", err)
		}
		return up
	}
	image, voice := content("client image", 5000), content("client voice", 1234)
	gif, doc := content("client gif", 4096), content("client document", 777)
	waveform := make([]byte, 64)
	for i := range waveform {
		waveform[i] = byte(i * 100 / 63)
	}
	up := upload(image, whatsmeow.MediaImage)
	upVoice, upGIF, upDoc := upload(voice, whatsmeow.MediaAudio), upload(gif, whatsmeow.MediaVideo), upload(doc, whatsmeow.MediaDocument)
	vcard := "BEGIN:VCARD\nVERSION:3.0\nFN:Alice\nTEL;type=CELL:+491701111111\nEND:VCARD\n"
	quoted := e.label["contact-text"]

	sends := []struct {
		label string
		msg   func() *waE2E.Message // built when sent: the revoke needs an id
		want  sandbox.Message
	}{
		{"client-text", func() *waE2E.Message {
			return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
				Text: proto.String("hi @" + contact),
				ContextInfo: &waE2E.ContextInfo{
					MentionedJID: []string{to.String()}, StanzaID: proto.String(quoted),
					Participant: proto.String(to.String()), QuotedMessage: &waE2E.Message{Conversation: proto.String("hello from the sandbox")},
				},
			}}
		}, sandbox.Message{Type: "text", Text: "hi @" + contact, Mentions: []string{to.String()}, QuotedID: "contact-text"}},
		{"client-image", func() *waE2E.Message {
			return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
				URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
				Mimetype: proto.String("image/jpeg"), Caption: proto.String("photo"),
			}}
		}, sandbox.Message{Type: "image", Caption: "photo", Mimetype: "image/jpeg", MediaSHA256: sum(image), MediaSize: int64(len(image))}},
		{"client-location", func() *waE2E.Message {
			return &waE2E.Message{LocationMessage: &waE2E.LocationMessage{
				DegreesLatitude: proto.Float64(52.5163), DegreesLongitude: proto.Float64(13.3777),
				Name: proto.String("Brandenburger Tor"), Address: proto.String("Pariser Platz, Berlin"),
			}}
		}, sandbox.Message{Type: "location", Latitude: proto.Float64(52.5163), Longitude: proto.Float64(13.3777), Name: "Brandenburger Tor", Address: "Pariser Platz, Berlin"}},
		{"client-contact", func() *waE2E.Message {
			return &waE2E.Message{ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Alice"), Vcard: proto.String(vcard)}}
		}, sandbox.Message{Type: "contact", Name: "Alice", VCard: vcard}},
		{"client-voice", func() *waE2E.Message {
			return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{
				URL: proto.String(upVoice.URL), DirectPath: proto.String(upVoice.DirectPath), MediaKey: upVoice.MediaKey,
				FileEncSHA256: upVoice.FileEncSHA256, FileSHA256: upVoice.FileSHA256, FileLength: proto.Uint64(upVoice.FileLength),
				Mimetype: proto.String("audio/ogg; codecs=opus"), PTT: proto.Bool(true), Seconds: proto.Uint32(4), Waveform: waveform,
			}}
		}, sandbox.Message{Type: "voice", Mimetype: "audio/ogg; codecs=opus", VoiceNote: true, Seconds: 4, Waveform: waveform, MediaSHA256: sum(voice), MediaSize: int64(len(voice))}},
		{"client-gif", func() *waE2E.Message {
			return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{
				URL: proto.String(upGIF.URL), DirectPath: proto.String(upGIF.DirectPath), MediaKey: upGIF.MediaKey,
				FileEncSHA256: upGIF.FileEncSHA256, FileSHA256: upGIF.FileSHA256, FileLength: proto.Uint64(upGIF.FileLength),
				Mimetype: proto.String("video/mp4"), GifPlayback: proto.Bool(true), Seconds: proto.Uint32(2), Caption: proto.String("loop"),
			}}
		}, sandbox.Message{Type: "video", Caption: "loop", Mimetype: "video/mp4", GIFPlayback: true, Seconds: 2, MediaSHA256: sum(gif), MediaSize: int64(len(gif))}},
		{"client-document", func() *waE2E.Message {
			return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
				URL: proto.String(upDoc.URL), DirectPath: proto.String(upDoc.DirectPath), MediaKey: upDoc.MediaKey,
				FileEncSHA256: upDoc.FileEncSHA256, FileSHA256: upDoc.FileSHA256, FileLength: proto.Uint64(upDoc.FileLength),
				Mimetype: proto.String("application/pdf"), FileName: proto.String("report.pdf"),
			}}
		}, sandbox.Message{Type: "document", FileName: "report.pdf", Mimetype: "application/pdf", MediaSHA256: sum(doc), MediaSize: int64(len(doc))}},
		{"client-reaction", func() *waE2E.Message {
			return e.cli.BuildReaction(to, to, quoted, "❤️")
		}, sandbox.Message{Type: "reaction", Text: "❤️", QuotedID: "contact-text"}},
		{"client-oops", func() *waE2E.Message {
			return &waE2E.Message{Conversation: proto.String("oops, wrong chat")}
		}, sandbox.Message{Type: "text", Text: "oops, wrong chat", Revoked: true}},
		{"client-revoke", func() *waE2E.Message {
			return e.cli.BuildRevoke(to, types.EmptyJID, e.label["client-oops"])
		}, sandbox.Message{Type: "revoke", QuotedID: "client-oops"}},
	}
	start := time.Now().Add(-time.Second)
	var want []sandbox.Message
	for _, s := range sends {
		resp, err := e.cli.SendMessage(ctx, to, s.msg())
		if err != nil {
			t.Fatalf("%s: %v", s.label, err)
		}
		e.name(s.label, resp.ID)
		w := s.want
		w.ID, w.From, w.Chat = s.label, me, types.NewJID(me, types.DefaultUserServer).String()
		want = append(want, w)
	}
	got, err := sandbox.Do(ctx, e.b, sandbox.Inbox{Phone: contact})
	if err != nil {
		return nil, err
	}
	for i := range got {
		m := &got[i]
		if m.Timestamp.Before(start) || m.Timestamp.After(time.Now()) {
			t.Errorf("message %d: timestamp %s, want the time it arrived", i, m.Timestamp)
		}
		m.Timestamp = time.Time{}
		m.ID, m.QuotedID = e.ids[m.ID], e.ids[m.QuotedID]
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w sandbox.Message
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("inbox[%d]:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}
	return got, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
