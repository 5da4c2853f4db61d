package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
)

// refusal is one request that must fail with status and a message holding
// every part of want.
type refusal struct {
	name, method, path, body string
	status                   int
	want                     []string
}

func checkRefusals(t *testing.T, s *apptest.Server, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := s.REST(t, tc.method, tc.path, apptest.AdminToken, tc.body)
			if res.Status != tc.status {
				t.Fatalf("got %d %s, want %d", res.Status, res.Body, tc.status)
			}
			msg := res.Message(t)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestSSRFRefused: media URLs reaching loopback, private, link-local or
// metadata addresses are refused (after DNS resolution for names) when
// private URLs are not allowed. Redirects to such addresses are covered by
// internal/media's tests, which can stand up an allowed public server.
func TestSSRFRefused(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinkedWith(t, func(cfg *config.Config, _ *app.Options) { cfg.AllowPrivateURLs = false })
	img := "/session/" + sess.ID + "/message/image"
	body := func(url string) string { return `{"number":"4915550007002","source":"` + url + `"}` }
	checkRefusals(t, s, []refusal{
		{"loopback", "POST", img, body("http://127.0.0.1:8080/x.png"), 400, []string{"source", "127.0.0.1", "loopback"}},
		{"IPv6 loopback", "POST", img, body("http://[::1]/x.png"), 400, []string{"source", "::1", "loopback"}},
		{"metadata", "POST", img, body("http://169.254.169.254/latest/meta-data"), 400, []string{"source", "169.254.169.254"}},
		{"private", "POST", img, body("https://10.0.0.1/x.png"), 400, []string{"source", "10.0.0.1", "private"}},
		{"name resolving to loopback", "POST", img, body("http://localhost:9/x.png"), 400, []string{"source", "loopback"}},
		{"display picture too", "PUT", "/session/" + sess.ID + "/display-picture", `{"identifier":"` + apptest.LinkedPhone + `","source":"http://127.0.0.1/p.jpg"}`, 400, []string{"source", "127.0.0.1"}},
	})
	if n := len(s.Network(t).Inbox("4915550007002")); n != 0 {
		t.Errorf("%d messages were sent anyway", n)
	}
}

// TestRefusals: bad input and WhatsApp's refusals, each with the status of
// rest.md and a message naming the problem.
func TestRefusals(t *testing.T) {
	t.Parallel()
	geocoder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "Pariser Platz 1, Berlin" {
			_ = json.NewEncoder(w).Encode([]map[string]string{{"lat": "52.5163", "lon": "13.3777", "display_name": "Pariser Platz 1, Berlin", "name": "Brandenburger Tor"}})
			return
		}
		_, _ = w.Write([]byte("[]"))
	}))
	defer geocoder.Close()
	s, sess := apptest.StartLinkedWith(t, func(cfg *config.Config, _ *app.Options) {
		cfg.GeocoderURL = geocoder.URL + "/search"
		cfg.MaxBody = 30 << 20
	})
	const to = "4915550008002"
	base := "/session/" + sess.ID

	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	host := files(t, map[string][]byte{"/huge.png": bytes.Repeat([]byte("x"), 31<<20)})
	huge := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 17<<20)...)

	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createSession { session { id } } }`, nil, &created)
	idle := created.CreateSession.Session.ID

	checkRefusals(t, s, []refusal{
		{"latitude out of range", "POST", base + "/message/location", `{"number":"` + to + `","latitude":91,"longitude":13}`, 400, []string{"latitude must be between -90 and 90"}},
		{"longitude out of range", "POST", base + "/message/location", `{"number":"` + to + `","latitude":52,"longitude":-181}`, 400, []string{"longitude must be between -180 and 180"}},
		{"neither coordinates nor address", "POST", base + "/message/location", `{"number":"` + to + `","name":"somewhere"}`, 400, []string{"latitude and longitude, or an address"}},
		{"address not found", "POST", base + "/message/location", `{"number":"` + to + `","address":"Nowhere 0"}`, 422, []string{"Nowhere 0", "could not be geocoded"}},
		{"number not on WhatsApp", "POST", base + "/message/text", `{"number":"4915550000000","text":"hi"}`, 422, []string{"4915550000000", "not on WhatsApp"}},
		{"number too short", "POST", base + "/message/text", `{"number":"123","text":"hi"}`, 400, []string{"number", "7 to 15 digits"}},
		{"session not connected", "POST", "/session/" + idle + "/message/text", `{"number":"` + to + `","text":"hi"}`, 409, []string{idle, "not connected", "DISCONNECTED"}},
		{"media over --max-body", "POST", base + "/message/document", `{"number":"` + to + `","source":"` + host + `/huge.png"}`, 413, []string{"30 MiB"}},
		{"image over WhatsApp's limit", "POST", base + "/message/image", `{"number":"` + to + `","source":"` + b64(huge) + `"}`, 413, []string{"16 MiB"}},
		{"not an image", "POST", base + "/message/image", `{"number":"` + to + `","source":"` + b64(big) + `"}`, 415, []string{"image"}},
		{"delay over a day", "POST", base + "/message/text", `{"number":"` + to + `","text":"hi","delay":86401}`, 400, []string{"delay must be between 0 and 86400"}},
		{"unknown field", "POST", base + "/message/text", `{"number":"` + to + `","txt":"hi"}`, 400, []string{"txt"}},
		{"privacy value", "PUT", base + "/privacy/read-receipts", `{"privacy":"contacts"}`, 400, []string{"all, none"}},
		{"disappearing mode", "PUT", base + "/privacy/default-disappearing-mode", `{"mode":"ONE_MONTH"}`, 400, []string{"OFF, ONE_DAY, ONE_WEEK, NINETY_DAYS"}},
		{"unknown group", "PUT", base + "/group/120363000000000001@g.us", `{"subject":"x"}`, 404, []string{"120363000000000001@g.us"}},
		{"bad group id", "PUT", base + "/group/not-a-group", `{"subject":"x"}`, 400, []string{"jid"}},
	})
	if n := len(s.Network(t).Inbox(to)); n != 0 {
		t.Errorf("%d messages were sent anyway", n)
	}

	t.Run("address geocoded", func(t *testing.T) {
		id := restSend(t, s, sess.ID, "location", map[string]any{"number": to, "address": "Pariser Platz 1, Berlin"})
		m := received(t, s, to, id)
		if m.Latitude == nil || *m.Latitude != 52.5163 || *m.Longitude != 13.3777 {
			t.Errorf("geocoded location %v %v", m.Latitude, m.Longitude)
		}
	})
	t.Run("no geocoder configured", func(t *testing.T) {
		s2, sess2 := apptest.StartLinkedWith(t, func(cfg *config.Config, _ *app.Options) { cfg.GeocoderURL = "" })
		checkRefusals(t, s2, []refusal{{"address only", "POST", "/session/" + sess2.ID + "/message/location", `{"number":"` + to + `","address":"Pariser Platz 1"}`, 422, []string{"no geocoder is configured", "--geocoder-url"}}})
	})
	t.Run("voice note without ffmpeg", func(t *testing.T) {
		s3, sess3 := apptest.StartLinkedWith(t, func(cfg *config.Config, _ *app.Options) { cfg.FFmpeg = "" })
		checkRefusals(t, s3, []refusal{{"wav voice note", "POST", "/session/" + sess3.ID + "/message/audio", `{"number":"` + to + `","source":"` + b64(wavAudio(t)) + `","asVoiceNote":true}`, 415, []string{"ffmpeg"}}})
	})
}
