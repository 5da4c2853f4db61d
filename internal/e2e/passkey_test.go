package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// passkeyState is what a test reads of a pairing session's passkey step.
type passkeyState struct {
	Status  string
	QRCode  *string
	Jid     *string
	Passkey *struct {
		Status    string
		PublicKey json.RawMessage
		Code      *string
		ExpiresAt string
	}
}

const passkeyFields = `status qrCode jid passkey { status publicKey code expiresAt }`

// tampered flips a bit of an assertion's signature.
func tampered(t *testing.T, assertion json.RawMessage) json.RawMessage {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal(assertion, &a); err != nil {
		t.Fatal(err)
	}
	resp := a["response"].(map[string]any)
	sig, err := base64.RawURLEncoding.DecodeString(resp["signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1
	resp["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	out, _ := json.Marshal(a)
	return out
}

// TestPasskeyLinking (must-show 1): an account that requires a passkey
// links end to end, by QR code through GraphQL and by phone code through
// REST. The sandbox link returns at the passkey step (PAIRING,
// Session.passkey set); a tampered assertion is refused (WHATSAPP_REFUSED,
// 422) with WhatsApp's reason and the session is still PAIRING with a
// fresh QR code; the account's authenticator answers the challenge, the
// code is confirmed, the session connects.
func TestPasskeyLinking(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	for _, byCode := range []bool{false, true} {
		t.Run(map[bool]string{false: "qr-graphql", true: "code-rest"}[byCode], func(t *testing.T) {
			t.Parallel()
			phone := map[bool]string{false: "4915550005101", true: "4915550005102"}[byCode]
			s.MustGraphQL(t, apptest.AdminToken, `mutation($p: String!) { sandboxRequirePasskey(phone: $p) }`, map[string]any{"p": phone}, nil)
			id := restCreateSession(t, s)
			if res := s.REST(t, "POST", "/session/"+id+"/connect", apptest.AdminToken, ""); res.Status != http.StatusOK {
				t.Fatalf("connect: %d %s", res.Status, res.Body)
			}
			link := func() passkeyState {
				t.Helper()
				var out struct{ L passkeyState }
				if byCode {
					s.WaitStatus(t, id, "PAIRING", func(st map[string]any) bool { return st["qrCode"] != nil })
					res := s.REST(t, "POST", "/session/"+id+"/pair-phone", apptest.AdminToken, `{"number":"`+phone+`"}`)
					var env struct{ Data struct{ Code string } }
					res.JSON(t, &env)
					s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $p: String!, $c: String!) { L: sandboxEnterPairingCode(sessionId: $id, phone: $p, code: $c) { `+passkeyFields+` } }`,
						map[string]any{"id": id, "p": phone, "c": env.Data.Code}, &out)
				} else {
					s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $p: String!) { L: sandboxLinkDevice(sessionId: $id, phone: $p) { `+passkeyFields+` } }`,
						map[string]any{"id": id, "p": phone}, &out)
				}
				if out.L.Status != "PAIRING" || out.L.Passkey == nil || out.L.Passkey.Status != "AWAITING_ASSERTION" || out.L.Passkey.ExpiresAt == "" {
					t.Fatalf("after the phone took the code: %+v", out.L)
				}
				return out.L
			}
			answer := func(st passkeyState) json.RawMessage {
				var out struct{ SandboxPasskeyAssertion json.RawMessage }
				s.MustGraphQL(t, apptest.AdminToken, `mutation($p: String!, $k: JSON!) { sandboxPasskeyAssertion(phone: $p, publicKey: $k) }`,
					map[string]any{"p": phone, "k": st.Passkey.PublicKey}, &out)
				return out.SandboxPasskeyAssertion
			}
			// submit hands the assertion over GraphQL or REST: the step after
			// it, or the refusal's code and message.
			submit := func(assertion json.RawMessage) (code, msg string, step passkeyState) {
				if byCode {
					res := s.REST(t, "POST", "/session/"+id+"/passkey/assertion", apptest.AdminToken, `{"assertion":`+string(assertion)+`}`)
					if res.Status != http.StatusOK {
						return http.StatusText(res.Status), res.Message(t), step
					}
					var env struct {
						Data struct {
							Status string
							Code   *string
						}
					}
					res.JSON(t, &env)
					step.Status = "PAIRING"
					step.Passkey = &struct {
						Status    string
						PublicKey json.RawMessage
						Code      *string
						ExpiresAt string
					}{Status: env.Data.Status, Code: env.Data.Code}
					return "", "", step
				}
				res := s.GraphQL(t, apptest.AdminToken, `mutation($id: ID!, $a: JSON!) { S: submitPasskeyAssertion(sessionId: $id, assertion: $a) { `+passkeyFields+` } }`,
					map[string]any{"id": id, "a": assertion})
				if len(res.Errors) > 0 {
					return res.Errors[0].Code(), res.Errors[0].Message, step
				}
				var out struct{ S passkeyState }
				if err := json.Unmarshal(res.Data, &out); err != nil {
					t.Fatal(err)
				}
				return "", "", out.S
			}

			st := link()
			code, msg, _ := submit(tampered(t, answer(st)))
			want := map[bool]string{false: "WHATSAPP_REFUSED", true: http.StatusText(http.StatusUnprocessableEntity)}[byCode]
			if code != want || !strings.Contains(msg, "passkey-signature-invalid") {
				t.Fatalf("tampered assertion: %s %q, want %s naming the reason", code, msg, want)
			}
			after := s.WaitStatus(t, id, "PAIRING", nil)
			if after["qrCode"] == nil {
				t.Fatalf("after the refusal: %+v, want a fresh QR code", after)
			}
			if res := s.REST(t, "GET", "/session/"+id+"/passkey", apptest.AdminToken, ""); res.Status != http.StatusConflict {
				t.Errorf("passkey step after the refusal: %d %s", res.Status, res.Body)
			}

			st = link()
			if byCode {
				res := s.REST(t, "GET", "/session/"+id+"/passkey", apptest.AdminToken, "")
				if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"rpId":"whatsapp.com"`) {
					t.Fatalf("GET passkey: %d %s", res.Status, res.Body)
				}
			}
			code, msg, step := submit(answer(st))
			if code != "" {
				t.Fatalf("the right assertion: %s %s", code, msg)
			}
			if step.Passkey == nil || step.Passkey.Status != "AWAITING_CONFIRMATION" || step.Passkey.Code == nil ||
				*step.Passkey.Code != s.Network(t).PasskeyCode(phone) {
				t.Fatalf("after the assertion: %+v; the phone shows %q", step.Passkey, s.Network(t).PasskeyCode(phone))
			}
			if byCode {
				if res := s.REST(t, "POST", "/session/"+id+"/passkey/confirm", apptest.AdminToken, ""); res.Status != http.StatusOK {
					t.Fatalf("confirm: %d %s", res.Status, res.Body)
				}
			} else {
				s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { confirmPasskey(sessionId: $id) { status } }`, map[string]any{"id": id}, nil)
			}
			linked := s.WaitStatus(t, id, "CONNECTED", nil)
			jid, _ := linked["jid"].(string)
			if !strings.HasPrefix(jid, phone+":") {
				t.Fatalf("connected as %+v", linked)
			}
			s.Track(apptest.Session{ID: id, Phone: phone, JID: jid})
		})
	}
}
