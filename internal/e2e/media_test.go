package e2e

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestMessageMedia: GET …/message/{id}/media serves the decrypted media of
// a message the session received and of ones it sent, downloaded from the
// (simulated) WhatsApp media host on demand, with its content type; the
// stored message names the route as mediaUrl; a message without media, an
// unknown one and a token that does not reach the session are 404.
func TestMessageMedia(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550013002"
	base := "/session/" + sess.ID + "/message/"

	photo := pngImage(t, 32, 24)
	var img struct{ SandboxSendImage string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $src: String!) { sandboxSendImage(sessionId: $s, from: $f, source: $src) }`,
		map[string]any{"s": sess.ID, "f": contact, "src": b64(photo)}, &img)
	received := img.SandboxSendImage
	waitStored(t, s, sess.ID, received)

	sentPhoto := pngImage(t, 40, 30)
	sentImage := restSend(t, s, sess.ID, "image", map[string]any{"number": contact, "source": b64(sentPhoto), "caption": "mine"})
	doc := []byte("%PDF-1.4\n% the quarterly report\n%%EOF\n")
	sentDoc := restSend(t, s, sess.ID, "document", map[string]any{"number": contact, "source": b64(doc), "fileName": `Q3 "final".pdf`})
	text := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "no media here"})
	for _, id := range []string{sentImage, sentDoc, text} {
		waitStored(t, s, sess.ID, id)
	}

	for _, tc := range []struct {
		name, id, contentType, disposition string
		want                               []byte
	}{
		{"received image", received, "image/png", "", photo},
		{"sent image", sentImage, "image/png", "", sentPhoto},
		{"sent document", sentDoc, "application/pdf", `inline; filename="Q3 \"final\".pdf"`, doc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.REST(t, http.MethodGet, base+tc.id+"/media", apptest.AdminToken, "")
			if res.Status != http.StatusOK {
				t.Fatalf("GET media: %d %s", res.Status, res.Body)
			}
			if !bytes.Equal(res.Body, tc.want) {
				t.Errorf("got %d bytes (sha %s), want %d bytes (sha %s)", len(res.Body), sha(res.Body), len(tc.want), sha(tc.want))
			}
			h := res.Header
			if h.Get("Content-Type") != tc.contentType || h.Get("Content-Length") != strconv.Itoa(len(tc.want)) ||
				h.Get("Content-Disposition") != tc.disposition {
				t.Errorf("headers Content-Type %q Content-Length %q Content-Disposition %q, want %q %d %q",
					h.Get("Content-Type"), h.Get("Content-Length"), h.Get("Content-Disposition"), tc.contentType, len(tc.want), tc.disposition)
			}

			// The stored message names the route, in GraphQL and REST.
			var out struct{ Message struct{ MediaURL *string } }
			s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { mediaUrl } }`,
				map[string]any{"s": sess.ID, "m": tc.id}, &out)
			if str(out.Message.MediaURL) != "/api/v1"+base+tc.id+"/media" {
				t.Errorf("GraphQL mediaUrl %q", str(out.Message.MediaURL))
			}
			var env struct{ Data struct{ MediaURL *string } }
			s.REST(t, http.MethodGet, base+tc.id, apptest.AdminToken, "").JSON(t, &env)
			if str(env.Data.MediaURL) != "/api/v1"+base+tc.id+"/media" {
				t.Errorf("REST mediaUrl %q", str(env.Data.MediaURL))
			}
		})
	}

	var u struct{ CreateUser struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "media stranger") { token } }`, nil, &u)
	for _, tc := range []struct {
		name, id, token, message string
	}{
		{"unknown message", "3EB0FFFFFFFFFFFFFFFFFF", apptest.AdminToken, "message 3EB0FFFFFFFFFFFFFFFFFF not found in session " + sess.ID},
		{"text message", text, apptest.AdminToken, "message " + text + " has no media"},
		{"another user's token", received, u.CreateUser.Token, "session " + sess.ID + " not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.REST(t, http.MethodGet, base+tc.id+"/media", tc.token, "")
			if res.Status != http.StatusNotFound || res.Header.Get("Content-Type") != "application/json" || res.Message(t) != tc.message {
				t.Errorf("%d %s %s, want 404 %q", res.Status, res.Header.Get("Content-Type"), res.Body, tc.message)
			}
		})
	}

	var out struct{ Message struct{ MediaURL *string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { mediaUrl } }`,
		map[string]any{"s": sess.ID, "m": text}, &out)
	if out.Message.MediaURL != nil {
		t.Errorf("a text message has mediaUrl %q", *out.Message.MediaURL)
	}
}
