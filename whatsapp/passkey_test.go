package whatsapp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// tamperSignature flips a bit of an assertion's signature.
func tamperSignature(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	resp := a["response"].(map[string]any)
	sig, err := base64.RawURLEncoding.DecodeString(resp["signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1
	resp["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPasskeyPairing: a session links an account that requires a passkey,
// by QR code and by phone code. Once the phone took the QR code (or the
// pairing code) the session stays PAIRING with the passkey step, its QR
// codes holding still far past the time they would have run out; a
// tampered assertion is refused with WhatsApp's reason and the session
// shows a fresh QR code; the right one yields the phone's confirmation
// code, and the confirmation links the device. connection.update carries
// the step.
func TestPasskeyPairing(t *testing.T) {
	t.Parallel()
	for _, byCode := range []bool{false, true} {
		t.Run(map[bool]string{false: "qr", true: "code"}[byCode], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			// Six codes run out in 3.5 s (the first long enough for a phone
			// code under the race detector): the step must outlast that.
			m.qrTimeouts = QRTimeouts{First: 3 * time.Second, Next: 100 * time.Millisecond}
			const id, phone = "pk", "491701234567"
			if err := e.net.RequirePasskey(phone); err != nil {
				t.Fatal(err)
			}
			e.statuses.add(id)
			if err := m.Connect(ctx, id); err != nil {
				t.Fatal(err)
			}
			link := func() SessionState {
				t.Helper()
				st := e.waitState(m, id, "QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
				if byCode {
					code, err := m.PairPhone(ctx, id, phone)
					if err != nil {
						t.Fatal(err)
					}
					if err := e.net.EnterPairingCode(phone, code); err != nil {
						t.Fatal(err)
					}
				} else if err := e.net.ScanQR(st.QRCode, phone); err != nil {
					t.Fatal(err)
				}
				return e.waitState(m, id, "the passkey step", func(st SessionState) bool { return st.Passkey.Status == PasskeyAwaitingAssertion })
			}
			st := link()
			if st.Status != StatusPairing || st.QRCode != "" || st.Passkey.ExpiresAt.Before(time.Now()) ||
				!strings.Contains(st.Passkey.PublicKey, `"rpId":"whatsapp.com"`) {
				t.Fatalf("in the passkey step: %+v", st)
			}
			time.Sleep(3700 * time.Millisecond)
			if held := m.State(id); held.Status != StatusPairing || held.Passkey != st.Passkey || held.QRCode != "" {
				t.Fatalf("the step did not hold: %+v", held)
			}

			_, err := m.ConfirmPasskey(ctx, id)
			wantFault(t, err, fault.Conflict, "not waiting for a passkey confirmation", "AWAITING_ASSERTION")
			_, err = m.SubmitPasskeyAssertion(ctx, id, json.RawMessage(`{"id":"x"}`))
			wantFault(t, err, fault.Invalid, "PublicKeyCredential")

			good, err := e.net.PasskeyAssertion(phone, []byte(st.Passkey.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.SubmitPasskeyAssertion(ctx, id, tamperSignature(t, good))
			wantFault(t, err, fault.WhatsAppRefused, "passkey-signature-invalid")
			after := m.State(id)
			if after.Status != StatusPairing || after.QRCode == "" || after.Passkey.Status != "" {
				t.Fatalf("after the refusal: %+v", after)
			}

			st = link()
			good, err = e.net.PasskeyAssertion(phone, []byte(st.Passkey.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			st, err = m.SubmitPasskeyAssertion(ctx, id, good)
			if err != nil {
				t.Fatal(err)
			}
			if phoneCode := e.net.PasskeyCode(phone); st.Passkey.Status != PasskeyAwaitingConfirmation || st.Passkey.Code == "" || st.Passkey.Code != phoneCode {
				t.Fatalf("after the assertion: %+v; the phone shows %q", st.Passkey, phoneCode)
			}
			e.eventWhere(id, KindConnectionUpdate, func(d map[string]any) bool {
				p, _ := d["passkey"].(map[string]any)
				return p != nil && p["status"] == "AWAITING_CONFIRMATION" && p["code"] == st.Passkey.Code && p["publicKey"] != nil
			})
			// Another process follows the step from the events alone.
			followed := StoredState(StatusRecord{Status: StatusDisconnected})
			for _, ev := range e.pub.events(id) {
				data, err := json.Marshal(ev.Data)
				if err != nil {
					t.Fatal(err)
				}
				followed = followed.Applied(ev.Kind, data, nil)
			}
			// (The test's publisher keeps data decoded: compare the options
			// as JSON values.)
			normal := func(p PasskeyStep) PasskeyStep {
				var v any
				if err := json.Unmarshal([]byte(p.PublicKey), &v); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(v)
				p.PublicKey = string(b)
				return p
			}
			if normal(followed.Passkey) != normal(m.State(id).Passkey) {
				t.Errorf("the events give the step %+v, the manager shows %+v", followed.Passkey, m.State(id).Passkey)
			}
			if _, err := m.ConfirmPasskey(ctx, id); err != nil {
				t.Fatal(err)
			}
			st = e.waitStatus(m, id, StatusConnected)
			if st.Phone != phone || st.Passkey.Status != "" {
				t.Errorf("linked as %+v", st)
			}
			e.settle(st)
		})
	}
}

// TestPasskeyLateAssertion: an assertion sent after the challenge expired
// is WHATSAPP_REFUSED with WhatsApp's reason, and the session shows a
// fresh QR code.
func TestPasskeyLateAssertion(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, wafake.Options{PasskeyTimeout: 300 * time.Millisecond})
	m := e.manager()
	const id, phone = "late", "491701234568"
	if err := e.net.RequirePasskey(phone); err != nil {
		t.Fatal(err)
	}
	e.statuses.add(id)
	if err := m.Connect(ctx, id); err != nil {
		t.Fatal(err)
	}
	st := e.waitState(m, id, "QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
	if err := e.net.ScanQR(st.QRCode, phone); err != nil {
		t.Fatal(err)
	}
	st = e.waitState(m, id, "the passkey step", func(st SessionState) bool { return st.Passkey.Status == PasskeyAwaitingAssertion })
	good, err := e.net.PasskeyAssertion(phone, []byte(st.Passkey.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(st.Passkey.ExpiresAt) + 50*time.Millisecond)
	_, err = m.SubmitPasskeyAssertion(ctx, id, good)
	wantFault(t, err, fault.WhatsAppRefused, "passkey-challenge-expired")
	if after := m.State(id); after.Status != StatusPairing || after.QRCode == "" || after.Passkey.Status != "" {
		t.Fatalf("after the late assertion: %+v", after)
	}
}
