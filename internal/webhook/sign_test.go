package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/webhook"
)

// verifySignature is a receiver's check written from the Standard Webhooks
// specification, independently of Sign: the key is the base64 after whsec_,
// the signed content "id.timestamp.body", and the header a space-separated
// list of "v1,<base64>" of which one must match.
func verifySignature(secret, id, timestamp string, body []byte, header string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "." + string(body)))
	want := mac.Sum(nil)
	for _, entry := range strings.Split(header, " ") {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// TestSignKnownAnswers: fixed vectors whose signatures were computed outside
// Go, with openssl, from the scheme (key = base64-decoded part after whsec_,
// HMAC-SHA256 of "id.timestamp.body", base64):
//
//	printf '%s' 'id.ts.body' | openssl dgst -sha256 -mac HMAC -macopt hexkey:<key hex> -binary | base64
//
// The first is the example the Standard Webhooks libraries test against.
func TestSignKnownAnswers(t *testing.T) {
	tests := []struct {
		name, secret, id string
		ts               int64
		body, want       string
	}{
		{
			name:   "standard webhooks example",
			secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			id:     "msg_p5jXN8AQM9LWM0D4loKWxJek",
			ts:     1614265330,
			body:   `{"test": 2432232314}`,
			want:   "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		},
		{
			name:   "32 key bytes 00..1f, as the registry makes them",
			secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
			id:     "evt_01JD0000000000000000000000",
			ts:     1700000000,
			body:   `{"id":"evt_01JD0000000000000000000000","seq":1}`,
			want:   "v1,cesrWF46Dk6gb/q4dfLIvC8P8L5zRUPV8nAJsbttlb8=",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Sign(tt.secret, tt.id, time.Unix(tt.ts, 0), []byte(tt.body))
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			if got != tt.want {
				t.Fatalf("Sign = %s, want %s", got, tt.want)
			}
			// Sub-second parts of the time are not signed: the header
			// carries whole seconds.
			got, err = webhook.Sign(tt.secret, tt.id, time.Unix(tt.ts, 999_999_999), []byte(tt.body))
			if err != nil || got != tt.want {
				t.Fatalf("Sign with nanoseconds = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestSignVerifies: every signature verifies with the independent check, and
// changing any signed part (or the key) breaks it.
func TestSignVerifies(t *testing.T) {
	ts := time.Date(2026, 11, 22, 10, 4, 5, 123e6, time.UTC)
	big := []byte(strings.Repeat(`{"k":"ü"}`, 20000))
	tests := []struct {
		name, secret, id string
		body             []byte
	}{
		{"envelope", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "evt_1", []byte(`{"event":"messages.update"}`)},
		{"empty body", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "evt_2", nil},
		{"binary body with dots", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "evt.3", []byte{0, '.', 0xff, '\n', '.'}},
		{"large body", "whsec_" + base64.StdEncoding.EncodeToString([]byte("a key that is not 32 bytes long")), "evt_4", big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := webhook.Sign(tt.secret, tt.id, ts, tt.body)
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			stamp := strconv.FormatInt(ts.Unix(), 10)
			if !verifySignature(tt.secret, tt.id, stamp, tt.body, sig) {
				t.Fatalf("signature %s does not verify", sig)
			}
			// Several signatures, space-separated, one matching.
			if !verifySignature(tt.secret, tt.id, stamp, tt.body, "v1,AAAA "+sig) {
				t.Fatalf("signature %s not found in a list", sig)
			}
			tampered := []struct {
				what                 string
				secret, id, ts, body string
			}{
				{"body", tt.secret, tt.id, stamp, string(tt.body) + " "},
				{"id", tt.secret, tt.id + "x", stamp, string(tt.body)},
				{"timestamp", tt.secret, tt.id, strconv.FormatInt(ts.Unix()+1, 10), string(tt.body)},
				{"secret", "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key")), tt.id, stamp, string(tt.body)},
			}
			for _, x := range tampered {
				if verifySignature(x.secret, x.id, x.ts, []byte(x.body), sig) {
					t.Errorf("signature still verifies with a changed %s", x.what)
				}
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	ts := time.Unix(1700000000, 0)
	tests := []struct {
		name, secret, id, want string
	}{
		{"no prefix", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "evt_1", "not whsec_"},
		{"prefix only", "whsec_", "evt_1", "not whsec_"},
		{"not base64", "whsec_sec!ret*value", "evt_1", "not whsec_"},
		{"url-safe alphabet", "whsec_-_-_AAAA", "evt_1", "not whsec_"},
		{"empty secret", "", "evt_1", "not whsec_"},
		{"empty id", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "", "id is empty"},
		{"id with a newline", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "evt\r\nX-Evil: 1", "0x0d"},
		{"id with a space", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "evt 1", "0x20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.Sign(tt.secret, tt.id, ts, []byte("{}"))
			if err == nil {
				t.Fatalf("Sign = %q, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if enc := strings.TrimPrefix(tt.secret, "whsec_"); enc != "" && strings.Contains(err.Error(), enc) {
				t.Errorf("error %q quotes the secret", err)
			}
			if _, err := webhook.SignedHeaders(tt.secret, tt.id, ts, []byte("{}")); err == nil {
				t.Error("SignedHeaders signed what Sign refuses")
			}
		})
	}
}

func TestSignedHeaders(t *testing.T) {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	h, err := webhook.SignedHeaders(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), body)
	if err != nil {
		t.Fatalf("SignedHeaders: %v", err)
	}
	want := http.Header{
		"Webhook-Id":        {"msg_p5jXN8AQM9LWM0D4loKWxJek"},
		"Webhook-Timestamp": {"1614265330"},
		"Webhook-Signature": {"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
		"Content-Type":      {"application/json"},
	}
	if len(h) != len(want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	for name, values := range want {
		if got := h.Values(name); len(got) != 1 || got[0] != values[0] {
			t.Errorf("%s = %q, want %q", name, got, values)
		}
	}
}
