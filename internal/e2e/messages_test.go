package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSends sends every kind of message through REST and through GraphQL
// and asserts what the recipient's phone decrypted.
func TestSends(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const to = "4915550001002"

	photo := pngImage(t, 64, 48)
	video := mp4Video(t)
	voice := opusVoice(t)
	doc := []byte("%PDF-1.4\n% a tiny document\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")
	host := files(t, map[string][]byte{"/photo.png": photo, "/clip.mp4": video, "/voice.ogg": voice})

	cases := []struct {
		name  string
		kind  string         // REST path after message/
		body  map[string]any // REST body; GraphQL input (number added)
		gql   string         // GraphQL mutation field
		check func(t *testing.T, m inboxMessage)
	}{
		{"text", "text", map[string]any{"text": "hello from wagraph"}, "sendText", func(t *testing.T, m inboxMessage) {
			if m.Type != "text" || str(m.Text) != "hello from wagraph" {
				t.Errorf("got %s %q", m.Type, str(m.Text))
			}
		}},
		{"image from URL", "image", map[string]any{"source": host + "/photo.png", "caption": "a photo"}, "sendImage", func(t *testing.T, m inboxMessage) {
			if m.Type != "image" || str(m.Caption) != "a photo" || str(m.MediaSha256) != sha(photo) {
				t.Errorf("got %s caption %q sha %s, want image %q %s", m.Type, str(m.Caption), str(m.MediaSha256), "a photo", sha(photo))
			}
		}},
		{"image as base64 data URI", "image", map[string]any{"source": "data:image/png;base64," + b64(photo)}, "sendImage", func(t *testing.T, m inboxMessage) {
			if m.Type != "image" || str(m.MediaSha256) != sha(photo) || str(m.Mimetype) != "image/png" {
				t.Errorf("got %s %s sha %s", m.Type, str(m.Mimetype), str(m.MediaSha256))
			}
		}},
		{"video as GIF", "video", map[string]any{"source": host + "/clip.mp4", "caption": "loop", "gifPlayback": true}, "sendVideo", func(t *testing.T, m inboxMessage) {
			if m.Type != "video" || !m.GifPlayback || str(m.MediaSha256) != sha(video) || str(m.Caption) != "loop" {
				t.Errorf("got %s gif=%v caption %q sha ok=%v", m.Type, m.GifPlayback, str(m.Caption), str(m.MediaSha256) == sha(video))
			}
		}},
		{"document", "document", map[string]any{"source": b64(doc), "fileName": "report.pdf", "caption": "Q3"}, "sendDocument", func(t *testing.T, m inboxMessage) {
			if m.Type != "document" || str(m.FileName) != "report.pdf" || str(m.Mimetype) != "application/pdf" || str(m.MediaSha256) != sha(doc) {
				t.Errorf("got %s %q %s sha ok=%v", m.Type, str(m.FileName), str(m.Mimetype), str(m.MediaSha256) == sha(doc))
			}
		}},
		{"voice note", "audio", map[string]any{"source": host + "/voice.ogg", "asVoiceNote": true}, "sendAudio", func(t *testing.T, m inboxMessage) {
			if !m.VoiceNote || len(m.Waveform) != 64 || m.Seconds == nil || *m.Seconds < 1 {
				t.Errorf("got voice=%v waveform %d values seconds %v", m.VoiceNote, len(m.Waveform), m.Seconds)
			}
			if slices.Max(m.Waveform) == slices.Min(m.Waveform) {
				t.Errorf("waveform is flat: %v", m.Waveform)
			}
		}},
		{"location", "location", map[string]any{"latitude": 52.5163, "longitude": 13.3777, "name": "Brandenburger Tor"}, "sendLocation", func(t *testing.T, m inboxMessage) {
			if m.Type != "location" || m.Latitude == nil || *m.Latitude != 52.5163 || *m.Longitude != 13.3777 || str(m.Name) != "Brandenburger Tor" {
				t.Errorf("got %s %v %v %q", m.Type, m.Latitude, m.Longitude, str(m.Name))
			}
		}},
		{"contact", "contact", map[string]any{"contact": map[string]any{"phoneNumber": "4915112345678", "firstName": "Ada", "lastName": "Lovelace"}}, "sendContact", func(t *testing.T, m inboxMessage) {
			v := str(m.Vcard)
			if m.Type != "contact" || !strings.Contains(v, "FN:Ada Lovelace") || !strings.Contains(v, "waid=4915112345678") {
				t.Errorf("got %s vcard %q", m.Type, v)
			}
		}},
	}
	for _, tc := range cases {
		t.Run("REST/"+tc.name, func(t *testing.T) {
			body := map[string]any{"number": to}
			for k, v := range tc.body {
				body[k] = v
			}
			id := restSend(t, s, sess.ID, tc.kind, body)
			tc.check(t, received(t, s, to, id))
		})
		t.Run("GraphQL/"+tc.name, func(t *testing.T) {
			input := map[string]any{"number": to + "@s.whatsapp.net"}
			for k, v := range tc.body {
				input[k] = v
			}
			var out map[string]struct{ MessageID, Timestamp string }
			s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $in: `+inputType(tc.gql)+`!) { r: `+tc.gql+`(sessionId: $id, input: $in) { messageId timestamp } }`,
				map[string]any{"id": sess.ID, "in": input}, &out)
			if out["r"].Timestamp == "" {
				t.Fatalf("no timestamp: %+v", out)
			}
			tc.check(t, received(t, s, to, out["r"].MessageID))
		})
	}
}

func inputType(field string) string { return "S" + field[1:] + "Input" }

// TestDeleteForEveryone revokes a sent message through REST and through
// GraphQL; the recipient sees it revoked; unknown ids are 404.
func TestDeleteForEveryone(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const to = "4915550002002"

	id := restSend(t, s, sess.ID, "text", map[string]any{"number": to, "text": "oops"})
	received(t, s, to, id)
	res := s.REST(t, "DELETE", "/session/"+sess.ID+"/message/"+id, apptest.AdminToken, "")
	if res.Status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", res.Status, res.Body)
	}
	waitRevoked(t, s, to, id)

	id2 := restSend(t, s, sess.ID, "text", map[string]any{"number": to, "text": "again"})
	var out struct{ DeleteMessage bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!) { deleteMessage(sessionId: $s, messageId: $m) }`,
		map[string]any{"s": sess.ID, "m": id2}, &out)
	waitRevoked(t, s, to, id2)

	var stored struct{ Message struct{ Status, Chat string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status chat } }`,
		map[string]any{"s": sess.ID, "m": id2}, &stored)
	if stored.Message.Status != "revoked" || stored.Message.Chat != to+"@s.whatsapp.net" {
		t.Errorf("stored message: %+v", stored.Message)
	}

	res = s.REST(t, "DELETE", "/session/"+sess.ID+"/message/NOSUCHID", apptest.AdminToken, "")
	if res.Status != http.StatusNotFound || !strings.Contains(res.Message(t), "message NOSUCHID not found") {
		t.Errorf("unknown message: %d %s", res.Status, res.Body)
	}
}

func waitRevoked(t *testing.T, s *apptest.Server, phone, id string) {
	t.Helper()
	for range 300 {
		if received(t, s, phone, id).Revoked {
			return
		}
		sleep()
	}
	t.Fatalf("message %s was not revoked at %s", id, phone)
}
