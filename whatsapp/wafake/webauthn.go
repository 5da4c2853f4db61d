package wafake

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// WebAuthn as WhatsApp uses it to gate linking (passkey.go): the network
// asks for an assertion of the account's passkey, a phone-side
// authenticator (the account's, simulated here) signs it, and the network
// verifies it by the rules of WebAuthn Level 2 §7.2 that matter for a
// network that knows the credential: the credential, the ceremony type, the
// challenge, the origin, the relying party, user presence and
// verification, the signature counter and the ECDSA P-256 signature over
// authenticatorData ‖ SHA-256(clientDataJSON). Only the standard library's
// crypto is used: the rules are few and a library would add nothing the
// tests do not check.

// PasskeyRPID is the relying party of WhatsApp's passkeys.
const PasskeyRPID = "whatsapp.com"

// PasskeyOrigin is where the simulated authenticator says the ceremony ran;
// the network accepts https://whatsapp.com and its subdomains.
const PasskeyOrigin = "https://www.whatsapp.com"

// Authenticator data flags (WebAuthn §6.1).
const (
	flagUserPresent  = 0x01
	flagUserVerified = 0x04
)

// passkeyCred is an account's passkey: the credential id and key pair the
// phone's authenticator holds, and the public half and the last signature
// counter the network keeps.
type passkeyCred struct {
	id    []byte
	key   *ecdsa.PrivateKey
	count uint32 // the last counter the network accepted (and the authenticator used)
}

func newPasskeyCred() (*passkeyCred, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("wafake: passkey key: %w", err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &passkeyCred{id: id, key: key}, nil
}

// passkeyOptions are the WebAuthn request options the network sends
// (PublicKeyCredentialRequestOptions in JSON form, as whatsmeow's
// types.WebAuthnPublicKey reads them).
type passkeyOptions struct {
	Challenge        b64url              `json:"challenge"`
	Timeout          int                 `json:"timeout"`
	RPID             string              `json:"rpId"`
	AllowCredentials []passkeyCredential `json:"allowCredentials"`
	UserVerification string              `json:"userVerification"`
}

type passkeyCredential struct {
	ID         b64url   `json:"id"`
	Type       string   `json:"type"`
	Transports []string `json:"transports,omitempty"`
}

// assertionJSON is a PublicKeyCredential in its toJSON() form.
type assertionJSON struct {
	ID       string `json:"id"`
	RawID    b64url `json:"rawId"`
	Type     string `json:"type"`
	Response struct {
		ClientDataJSON    b64url  `json:"clientDataJSON"`
		AuthenticatorData b64url  `json:"authenticatorData"`
		Signature         b64url  `json:"signature"`
		UserHandle        *b64url `json:"userHandle,omitempty"`
	} `json:"response"`
	AuthenticatorAttachment string         `json:"authenticatorAttachment,omitempty"`
	ClientExtensionResults  map[string]any `json:"clientExtensionResults"`
}

type clientData struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	Origin    string `json:"origin"`
}

// b64url is bytes as unpadded base64url, as toJSON() writes them; padded
// input is read too.
type b64url []byte

func (b b64url) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.RawURLEncoding.EncodeToString(b))
}

func (b *b64url) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	out, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return fmt.Errorf("not base64url: %w", err)
	}
	*b = out
	return nil
}

// The reasons the network refuses an assertion; each is the text of the
// IQ error the client gets (401).
var (
	errPasskeyMalformed  = errors.New("passkey-assertion-malformed")
	errPasskeyCredential = errors.New("passkey-unknown-credential")
	errPasskeyType       = errors.New("passkey-wrong-ceremony")
	errPasskeyChallenge  = errors.New("passkey-challenge-mismatch")
	errPasskeyOrigin     = errors.New("passkey-origin-mismatch")
	errPasskeyRPID       = errors.New("passkey-rpid-mismatch")
	errPasskeyUser       = errors.New("passkey-user-not-verified")
	errPasskeyCounter    = errors.New("passkey-counter-regressed")
	errPasskeySignature  = errors.New("passkey-signature-invalid")
	errPasskeyExpired    = errors.New("passkey-challenge-expired")
)

// verifyAssertion checks an assertion of cred (credentialID is what the
// client sent beside it) for challenge, which expires at expires; now is
// the time it arrived. On success it returns the authenticator's new
// signature counter.
func verifyAssertion(cred *passkeyCred, challenge []byte, expires, now time.Time, credentialID, raw []byte) (uint32, error) {
	if now.After(expires) {
		return 0, errPasskeyExpired
	}
	var a assertionJSON
	if err := json.Unmarshal(raw, &a); err != nil || a.Type != "public-key" {
		return 0, errPasskeyMalformed
	}
	if !bytes.Equal(a.RawID, cred.id) || !bytes.Equal(credentialID, cred.id) || a.ID != base64.RawURLEncoding.EncodeToString(cred.id) {
		return 0, errPasskeyCredential
	}
	var cd clientData
	if err := json.Unmarshal(a.Response.ClientDataJSON, &cd); err != nil {
		return 0, errPasskeyMalformed
	}
	if cd.Type != "webauthn.get" {
		return 0, errPasskeyType
	}
	if cd.Challenge != base64.RawURLEncoding.EncodeToString(challenge) {
		return 0, errPasskeyChallenge
	}
	if !originAllowed(cd.Origin) {
		return 0, errPasskeyOrigin
	}
	ad := a.Response.AuthenticatorData
	if len(ad) < 37 {
		return 0, errPasskeyMalformed
	}
	if rp := sha256.Sum256([]byte(PasskeyRPID)); !bytes.Equal(ad[:32], rp[:]) {
		return 0, errPasskeyRPID
	}
	if ad[32]&flagUserPresent == 0 || ad[32]&flagUserVerified == 0 {
		return 0, errPasskeyUser
	}
	digest := sha256.Sum256(concat(ad, sum256(a.Response.ClientDataJSON)))
	if !ecdsa.VerifyASN1(&cred.key.PublicKey, digest[:], a.Response.Signature) {
		return 0, errPasskeySignature
	}
	// A counter that does not grow means a cloned authenticator (§6.1.1);
	// 0 on both sides is an authenticator that keeps none.
	count := binary.BigEndian.Uint32(ad[33:37])
	if (count != 0 || cred.count != 0) && count <= cred.count {
		return 0, errPasskeyCounter
	}
	return count, nil
}

func originAllowed(origin string) bool {
	host, ok := strings.CutPrefix(origin, "https://")
	return ok && (host == PasskeyRPID || strings.HasSuffix(host, "."+PasskeyRPID))
}

func sum256(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// ceremony is what an authenticator puts in an assertion; assert signs it.
type ceremony struct {
	typ, origin, rpID string
	challenge         []byte
	flags             byte
}

// assert is the authenticator of cred answering c: the assertion in toJSON()
// form. The counter grows with every signature.
func (cred *passkeyCred) assert(c ceremony, count uint32) ([]byte, error) {
	cdj, err := json.Marshal(clientData{Type: c.typ, Challenge: base64.RawURLEncoding.EncodeToString(c.challenge), Origin: c.origin})
	if err != nil {
		return nil, err
	}
	ad := concat(sum256([]byte(c.rpID)), []byte{c.flags}, binary.BigEndian.AppendUint32(nil, count))
	digest := sha256.Sum256(concat(ad, sum256(cdj)))
	sig, err := ecdsa.SignASN1(rand.Reader, cred.key, digest[:])
	if err != nil {
		return nil, fmt.Errorf("wafake: passkey signature: %w", err)
	}
	var a assertionJSON
	a.ID, a.RawID, a.Type = base64.RawURLEncoding.EncodeToString(cred.id), cred.id, "public-key"
	a.Response.ClientDataJSON, a.Response.AuthenticatorData, a.Response.Signature = cdj, ad, sig
	a.AuthenticatorAttachment, a.ClientExtensionResults = "platform", map[string]any{}
	return json.Marshal(a)
}
