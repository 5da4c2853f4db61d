package whatsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// The passkey step of pairing. Since mid-2026 WhatsApp asks some accounts
// for their passkey (WebAuthn) when a device is linked, by QR code or by
// phone code. The gateway cannot hold the passkey: it shows the request
// options (Session.passkey), takes the assertion whoever holds the passkey
// made (SubmitPasskeyAssertion), shows the confirmation code WhatsApp's
// answer yields and sends the confirmation when asked (ConfirmPasskey).
// The QR rotation holds still meanwhile (qrcodes.go).
//
// The gateway never confirms by itself. whatsmeow's SkipHandoffUX says only
// that the client still held the handoff key of its QR code when it
// answered (within 5 minutes of the request), which it always does by
// phone code too, where the phone never saw that key; and the code a
// person compares is the one check that the link they approve is theirs.
//
// By phone code, WhatsApp's primary_hello for a passkey account carries no
// wrapped ephemeral key (whatsmeow #1188, #1233): whatsmeow at our pin
// logs "Failed to handle code pair notification: missing
// <link_code_pairing_wrapped_primary_ephemeral_pub>" and does nothing else;
// the passkey notification that follows links the device as by QR code.
// The gateway's whatsmeow log reads that one message as the passkey
// hand-off it is (log.go) rather than an error.

// PasskeyStatus is where the passkey step stands.
type PasskeyStatus string

// The passkey step's statuses (GraphQL PasskeyStatus).
const (
	PasskeyAwaitingAssertion    PasskeyStatus = "AWAITING_ASSERTION"
	PasskeyAwaitingConfirmation PasskeyStatus = "AWAITING_CONFIRMATION"
)

// PasskeyStep is the passkey step of a pairing session. The zero value is
// no step.
type PasskeyStep struct {
	Status PasskeyStatus
	// PublicKey is the WebAuthn request options in JSON form, as WhatsApp
	// sent them (PublicKeyCredential.parseRequestOptionsFromJSON reads it).
	PublicKey string
	Code      string    // the confirmation code, once WhatsApp answered the assertion
	ExpiresAt time.Time // when WhatsApp stops taking the assertion
}

// passkeyWait is how long SubmitPasskeyAssertion and ConfirmPasskey wait
// for what WhatsApp does next (the code, fresh QR codes, the link).
const passkeyWait = 10 * time.Second

func (p PasskeyStep) data() *payload.Passkey {
	if p.Status == "" {
		return nil
	}
	return &payload.Passkey{Status: string(p.Status), PublicKey: json.RawMessage(p.PublicKey), Code: payload.Text(p.Code), ExpiresAt: payload.At(p.ExpiresAt)}
}

// handlePasskeyRequest: WhatsApp asks for the account's passkey.
func (r *clientRun) handlePasskeyRequest(evt *events.PairPasskeyRequest) bool {
	opts, err := json.Marshal(evt.PublicKey)
	if err != nil {
		r.s.log.Warn("passkey request options unreadable", "err", err)
		return true
	}
	timeout := time.Duration(evt.PublicKey.Timeout) * time.Millisecond
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	hold := true
	r.qrEvent(nil, &hold)
	return r.update(func(s *session) bool {
		if !s.st.jid.IsEmpty() || (s.st.status != StatusConnecting && s.st.status != StatusPairing) {
			return false
		}
		// The QR code the phone scanned is spent: the step replaces it.
		s.st.status, s.st.qr = StatusPairing, ""
		s.st.passkey = PasskeyStep{Status: PasskeyAwaitingAssertion, PublicKey: string(opts), ExpiresAt: time.Now().Add(timeout).UTC().Truncate(time.Millisecond)}
		return true
	})
}

// handlePasskeyConfirmation: WhatsApp took the assertion; the code is to
// be compared with the phone's.
func (r *clientRun) handlePasskeyConfirmation(evt *events.PairPasskeyConfirmation) bool {
	return r.update(func(s *session) bool {
		if s.st.passkey.Status == "" {
			return false
		}
		s.st.passkey.Status, s.st.passkey.Code = PasskeyAwaitingConfirmation, evt.Code
		return true
	})
}

// handlePasskeyError: whatsmeow could not read a step of WhatsApp's. The
// step ends and the QR codes turn again.
func (r *clientRun) handlePasskeyError(evt *events.PairPasskeyError) bool {
	r.s.log.Warn("passkey step failed", "continuation", evt.Continuation, "err", evt.Error)
	hold := false
	r.qrEvent(nil, &hold)
	return r.update(func(s *session) bool {
		if s.st.passkey.Status == "" {
			return false
		}
		s.st.passkey, s.st.reason = PasskeyStep{}, fmt.Sprintf("the passkey step failed: %v", evt.Error)
		return true
	})
}

// pairingStep returns the running client of a session at passkey step want.
func (m *Manager) pairingStep(ctx context.Context, id string, want PasskeyStatus, what string) (*session, *whatsmeow.Client, error) {
	s, err := m.lockSession(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	defer s.opMu.Unlock()
	s.mu.Lock()
	st, cli := s.st, s.cli
	s.mu.Unlock()
	if cli == nil || st.status != StatusPairing || st.passkey.Status != want {
		msg := fmt.Sprintf("session %s is not waiting for %s (status: %s", id, what, st.status)
		if st.passkey.Status != "" {
			msg += ", passkey step: " + string(st.passkey.Status)
		}
		return nil, nil, fault.New(fault.Conflict, "%s)", msg)
	}
	return s, cli, nil
}

// SubmitPasskeyAssertion hands WhatsApp the assertion of the account's
// passkey (a PublicKeyCredential in its toJSON() form) and returns the
// state once WhatsApp answered with the confirmation code. A refused or
// late assertion is WHATSAPP_REFUSED with WhatsApp's reason; the session
// then shows fresh QR codes.
func (m *Manager) SubmitPasskeyAssertion(ctx context.Context, id string, assertion json.RawMessage) (SessionState, error) {
	resp, err := parseAssertion(assertion)
	if err != nil {
		return SessionState{}, err
	}
	s, cli, err := m.pairingStep(ctx, id, PasskeyAwaitingAssertion, "a passkey assertion")
	if err != nil {
		return SessionState{}, err
	}
	if err := cli.SendPasskeyResponse(ctx, resp); err != nil {
		f := classify(id, "take the passkey assertion", err)
		// WhatsApp offers fresh QR codes after a refusal: wait for them, so
		// the caller reads the session as it goes on.
		m.awaitStep(ctx, s, func(st *sessionState) bool { return st.passkey.Status == "" })
		return SessionState{}, f
	}
	m.awaitStep(ctx, s, func(st *sessionState) bool { return st.passkey.Status != PasskeyAwaitingAssertion })
	return m.Status(ctx, id)
}

// ConfirmPasskey confirms that the code of the passkey step matches the
// one the phone shows; WhatsApp then links the device.
func (m *Manager) ConfirmPasskey(ctx context.Context, id string) (SessionState, error) {
	s, cli, err := m.pairingStep(ctx, id, PasskeyAwaitingConfirmation, "a passkey confirmation")
	if err != nil {
		return SessionState{}, err
	}
	if err := cli.SendPasskeyConfirmation(ctx); err != nil {
		return SessionState{}, classify(id, "take the passkey confirmation", err)
	}
	m.awaitStep(ctx, s, func(st *sessionState) bool { return st.passkey.Status == "" })
	return m.Status(ctx, id)
}

// awaitStep waits, passkeyWait at most, until ok holds for s's state or
// the session stops pairing.
func (m *Manager) awaitStep(ctx context.Context, s *session, ok func(*sessionState) bool) {
	wctx, cancel := context.WithTimeout(ctx, passkeyWait)
	defer cancel()
	_, _, _ = s.waitFor(wctx, func(st *sessionState) bool { return st.status != StatusPairing || ok(st) })
}

// parseAssertion reads a PublicKeyCredential in toJSON() form.
func parseAssertion(raw json.RawMessage) (*types.WebAuthnResponse, error) {
	const rule = "assertion must be a PublicKeyCredential in its toJSON() form: {id, rawId, type: \"public-key\", response: {clientDataJSON, authenticatorData, signature, userHandle}}, base64url"
	var resp types.WebAuthnResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fault.InvalidField("assertion", "%s (not JSON)", rule)
		}
		return nil, fault.InvalidField("assertion", "%s (%v)", rule, err)
	}
	r := resp.Response
	switch {
	case resp.Type != "public-key":
		return nil, fault.InvalidField("assertion", "%s (type is %q)", rule, resp.Type)
	case len(resp.RawID) == 0:
		return nil, fault.InvalidField("assertion", "%s (rawId is missing)", rule)
	case len(r.ClientDataJSON) == 0 || len(r.AuthenticatorData) == 0 || len(r.Signature) == 0:
		return nil, fault.InvalidField("assertion", "%s (response.clientDataJSON, authenticatorData and signature are required)", rule)
	}
	return &resp, nil
}
