package wafake

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestVerifyAssertion: the rules the network checks an assertion by; each
// wrong one is refused with its own reason.
func TestVerifyAssertion(t *testing.T) {
	cred, err := newPasskeyCred()
	if err != nil {
		t.Fatal(err)
	}
	other, err := newPasskeyCred()
	if err != nil {
		t.Fatal(err)
	}
	challenge := []byte("a challenge of thirty-two bytes!")
	now := time.Now()
	expires := now.Add(time.Minute)
	good := ceremony{typ: "webauthn.get", origin: PasskeyOrigin, rpID: PasskeyRPID, challenge: challenge, flags: flagUserPresent | flagUserVerified}
	with := func(f func(*ceremony)) ceremony { c := good; f(&c); return c }
	sign := func(cr *passkeyCred, c ceremony, count uint32) []byte {
		raw, err := cr.assert(c, count)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	tamper := func(raw []byte, f func(*assertionJSON)) []byte {
		var a assertionJSON
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		f(&a)
		out, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name      string
		assertion []byte
		credID    []byte
		at        time.Time
		want      error
	}{
		{"valid", sign(cred, good, 1), cred.id, now, nil},
		{"valid at another subdomain", sign(cred, with(func(c *ceremony) { c.origin = "https://web.whatsapp.com" }), 1), cred.id, now, nil},
		{"bad signature", tamper(sign(cred, good, 1), func(a *assertionJSON) { a.Response.Signature[len(a.Response.Signature)-1] ^= 1 }), cred.id, now, errPasskeySignature},
		{"signed by another key", tamper(sign(other, good, 1), func(a *assertionJSON) { a.ID, a.RawID = sign64(cred.id), cred.id }), cred.id, now, errPasskeySignature},
		{"client data changed after signing", tamper(sign(cred, good, 1), func(a *assertionJSON) {
			a.Response.ClientDataJSON = []byte(`{"type":"webauthn.get","challenge":"` + sign64(challenge) + `","origin":"https://whatsapp.com"}`)
		}), cred.id, now, errPasskeySignature},
		{"wrong challenge", sign(cred, with(func(c *ceremony) { c.challenge = []byte("another challenge") }), 1), cred.id, now, errPasskeyChallenge},
		{"wrong origin", sign(cred, with(func(c *ceremony) { c.origin = "https://whatsapp.com.evil.example" }), 1), cred.id, now, errPasskeyOrigin},
		{"plain http origin", sign(cred, with(func(c *ceremony) { c.origin = "http://www.whatsapp.com" }), 1), cred.id, now, errPasskeyOrigin},
		{"wrong rpId", sign(cred, with(func(c *ceremony) { c.rpID = "evil.example" }), 1), cred.id, now, errPasskeyRPID},
		{"registration instead of assertion", sign(cred, with(func(c *ceremony) { c.typ = "webauthn.create" }), 1), cred.id, now, errPasskeyType},
		{"user not verified", sign(cred, with(func(c *ceremony) { c.flags = flagUserPresent }), 1), cred.id, now, errPasskeyUser},
		{"expired", sign(cred, good, 1), cred.id, expires.Add(time.Millisecond), errPasskeyExpired},
		{"unknown credential", sign(other, good, 1), other.id, now, errPasskeyCredential},
		{"credential id beside it differs", sign(cred, good, 1), other.id, now, errPasskeyCredential},
		{"not JSON", []byte("{"), cred.id, now, errPasskeyMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verifyAssertion(cred, challenge, expires, tc.at, tc.credID, tc.assertion)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}

	// The counter: accepted ones must grow.
	cred.count = 5
	if _, err := verifyAssertion(cred, challenge, expires, now, cred.id, sign(cred, good, 5)); !errors.Is(err, errPasskeyCounter) {
		t.Errorf("a counter that did not grow: %v", err)
	}
	if n, err := verifyAssertion(cred, challenge, expires, now, cred.id, sign(cred, good, 6)); err != nil || n != 6 {
		t.Errorf("a grown counter: %d, %v", n, err)
	}
}

func sign64(b []byte) string {
	out, _ := b64url(b).MarshalJSON()
	return string(out[1 : len(out)-1])
}
