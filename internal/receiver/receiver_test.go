package receiver_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/wagraph/wagraph/internal/receiver"
	"github.com/wagraph/wagraph/internal/webhook"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

const body = `{"id":"evt_1","seq":7,"event":"inbound-message.upsert","sessionId":"s-1","timestamp":"2026-11-26T10:00:00.000Z","data":{"text":"hi \u001b[31mred","caption":null}}`

// post sends one delivery signed at signedAt with key to h.
func post(t *testing.T, h http.Handler, key, id string, signedAt time.Time, b string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(b))
	if key != "" {
		hdr, err := webhook.SignedHeaders(key, id, signedAt, []byte(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = hdr
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestReceiver(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	other := "whsec_" + strings.Repeat("A", 32)
	tests := []struct {
		name     string
		secret   string // the receiver's
		key      string // the sender's
		signedAt time.Time
		body     string
		status   int
		printed  []string
	}{
		{"signed and verified", secret, secret, now, body, 204,
			[]string{"inbound-message.upsert seq=7 session=s-1 id=evt_1 signature ok", `{"text":"hi \u001b[31mred"}`}},
		{"another secret", secret, other, now, body, 401,
			[]string{"REFUSED evt_1: no webhook-signature matches"}},
		{"a replay ten minutes late", secret, secret, now.Add(-10 * time.Minute), body, 401,
			[]string{"REFUSED evt_1: webhook-timestamp is 10m0s away"}},
		{"not signed at all", secret, "", now, body, 401,
			[]string{"REFUSED : missing webhook-id"}},
		{"no secret: printed, marked unverified", "", "", now, body, 204,
			[]string{"inbound-message.upsert seq=7", "unverified (no --secret)"}},
		{"not an envelope", secret, secret, now, `{"hello":1}`, 400,
			[]string{"REFUSED evt_1: the body is not an event envelope"}},
		{"control characters in the kind are quoted", "", "", now,
			`{"id":"e","event":"x\u001b[2Jy","data":null}`, 204, []string{`"x\x1b[2Jy" seq=0`}},
		// U+009B is CSI in one character: an 8-bit terminal runs what
		// follows it as an escape sequence. U+202E and the isolates turn
		// what follows them around, so a line can read as another.
		{"C1 and bidi controls in the data are escaped, visibly", "", "", now,
			`{"id":"e","event":"messages.upsert","data":{"text":"a\u009b2Jb \u0085 \u202egnp.exe \u2066x\u2069 \u200f \u061c \u202a\u202c","caption":"\u007f"}}`, 204,
			[]string{`{"caption":"\u007f","text":"a\u009b2Jb \u0085 \u202egnp.exe \u2066x\u2069 \u200f \u061c \u202a\u202c"}`}},
		{"C1 and bidi controls in the kind, session and id are quoted", "", "", now,
			`{"id":"e\u202e","event":"x\u009by","sessionId":"s\u2067","data":null}`, 204,
			[]string{`"x\u009by" seq=0 session="s\u2067" id="e\u202e"`}},
		{"other text is kept as it is", "", "", now,
			`{"id":"e","event":"messages.upsert","data":{"text":"héllo שלום 👨‍👩‍👧 ｆｕｌｌ"}}`, 204,
			[]string{`{"text":"héllo שלום 👨‍👩‍👧 ｆｕｌｌ"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h := receiver.New(&out, receiver.Options{Secret: tt.secret, Now: func() time.Time { return now }})
			rec := post(t, h, tt.key, "evt_1", tt.signedAt, tt.body)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d (%s)", rec.Code, tt.status, rec.Body)
			}
			for _, want := range tt.printed {
				if !strings.Contains(out.String(), want) {
					t.Errorf("printed %q, want it to contain %q", out.String(), want)
				}
			}
			for _, r := range strings.TrimSuffix(out.String(), "\n") {
				if (unicode.IsControl(r) && r != '\n') || unicode.Is(unicode.Bidi_Control, r) {
					t.Errorf("%U reached the terminal: %q", r, out.String())
				}
			}
		})
	}
}

// TestReceiverSpotsRedelivery: at-least-once delivery means the same
// webhook-id may come twice; the receiver says so.
func TestReceiverSpotsRedelivery(t *testing.T) {
	now := time.Now()
	var out bytes.Buffer
	h := receiver.New(&out, receiver.Options{Secret: secret, Now: func() time.Time { return now }, Seen: 2})
	for _, id := range []string{"a", "b", "a", "c", "d", "a"} {
		if rec := post(t, h, secret, id, now, body); rec.Code != 204 {
			t.Fatalf("%s: status %d", id, rec.Code)
		}
	}
	lines := strings.Split(out.String(), "\n")
	var again []int
	for i, l := range lines {
		if strings.Contains(l, "(again: same webhook-id") {
			again = append(again, i/2)
		}
	}
	// The third delivery repeats "a"; by the sixth, "a" was forgotten (two kept).
	if len(again) != 1 || again[0] != 2 {
		t.Errorf("redeliveries flagged at %v, want [2]:\n%s", again, out.String())
	}
}

func TestReceiverRefusesGetAndHugeBodies(t *testing.T) {
	h := receiver.New(&bytes.Buffer{}, receiver.Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", receiver.MaxBody+1))))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over MaxBody: %d", rec.Code)
	}
}
