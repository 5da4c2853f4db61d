package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/webhook"
)

// TestVerify checks the receiver's side against the independent checker
// of sign_test.go: what it accepts, the other accepts too.
func TestVerify(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"event":"webhook.test"}`)
	signed := func(at time.Time) http.Header {
		h, err := webhook.SignedHeaders(secret, "evt_1", at, body)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		err    string
	}{
		{"fresh", signed(now), body, ""},
		{"four minutes early clock", signed(now.Add(4 * time.Minute)), body, ""},
		{"six minutes late", signed(now.Add(-6 * time.Minute)), body, "away from this clock"},
		{"six minutes ahead", signed(now.Add(6 * time.Minute)), body, "away from this clock"},
		{"body changed", signed(now), []byte(`{"event":"webhook.tesT"}`), "no webhook-signature matches"},
		{"a rotated list with the right one second", func() http.Header {
			h := signed(now)
			h.Set(webhook.HeaderSignature, "v1,AAAA "+h.Get(webhook.HeaderSignature))
			return h
		}(), body, ""},
		{"timestamp not a number", func() http.Header {
			h := signed(now)
			h.Set(webhook.HeaderTimestamp, "yesterday")
			return h
		}(), body, "is not unix seconds"},
		{"no headers", http.Header{}, body, "missing webhook-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(secret, tt.header, tt.body, now, webhook.DefaultTolerance)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !verifySignature(secret, tt.header.Get(webhook.HeaderID), tt.header.Get(webhook.HeaderTimestamp), tt.body, tt.header.Get(webhook.HeaderSignature)) {
					t.Error("Verify accepted what the specification's check refuses")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one containing %q", err, tt.err)
			}
			if strings.Contains(err.Error(), "MfKQ9r8") {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}
