package restcompat

import (
	"encoding/json"
	"net/http"

	"github.com/swaggest/jsonschema-go"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// passkeyJSON is the passkey step of a pairing session.
type passkeyJSON struct {
	Status    passkeyStatus `json:"status" required:"true"`
	PublicKey webauthnJSON  `json:"publicKey" required:"true" description:"The WebAuthn request options, as WhatsApp sent them (JSON form: base64url challenge, rpId, allowCredentials, …): PublicKeyCredential.parseRequestOptionsFromJSON reads them."`
	Code      *string       `json:"code" required:"true" description:"The confirmation code to compare with the one the phone shows; null until WhatsApp answered the assertion." examples:"[\"K7QH-3MXD\"]"`
	ExpiresAt timestamp     `json:"expiresAt" required:"true" description:"When WhatsApp stops taking the assertion; a late one is refused (422) and the session shows a fresh QR code."`
	_         struct{}      `description:"The passkey step of a pairing: WhatsApp asks for an assertion of the account's passkey (AWAITING_ASSERTION), then for the confirmation code to be compared (AWAITING_CONFIRMATION)."`
}

// passkeyStatus is where the step stands, its values GraphQL's enum.
type passkeyStatus string

func (passkeyStatus) PrepareJSONSchema(s *jsonschema.Schema) error {
	var values []any
	for _, v := range model.AllPasskeyStatus {
		values = append(values, string(v))
	}
	s.WithEnum(values...).WithDescription("AWAITING_ASSERTION: answer publicKey with the account's passkey (POST …/passkey/assertion); AWAITING_CONFIRMATION: compare code with the phone's, then POST …/passkey/confirm.")
	return nil
}

// webauthnJSON is a WebAuthn object in its JSON form, passed through as
// it is.
type webauthnJSON json.RawMessage

func (j webauthnJSON) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

func (j *webauthnJSON) UnmarshalJSON(b []byte) error {
	*j = append((*j)[:0], b...)
	return nil
}

// PrepareJSONSchema: an object whose fields are WebAuthn's, shown as
// WhatsApp sent them.
func (webauthnJSON) PrepareJSONSchema(s *jsonschema.Schema) error {
	*s = jsonschema.Schema{}
	s.AddType(jsonschema.Object)
	return nil
}

type passkeyAssertionRequest struct {
	Assertion *assertionInput `json:"assertion" required:"true" description:"The assertion of the account's passkey: a PublicKeyCredential in its toJSON() form, base64url."`
}

// assertionInput is a PublicKeyCredential's toJSON() of an assertion.
type assertionInput struct {
	ID                      string                     `json:"id" required:"true" description:"The credential id, base64url."`
	RawID                   string                     `json:"rawId" required:"true" description:"The credential id, base64url."`
	Type                    string                     `json:"type" required:"true" enum:"public-key"`
	Response                *assertionResponseInput    `json:"response" required:"true"`
	AuthenticatorAttachment *string                    `json:"authenticatorAttachment" description:"platform or cross-platform, as the browser tells it."`
	ClientExtensionResults  map[string]json.RawMessage `json:"clientExtensionResults" description:"The extensions' outputs, as the browser gives them."`
}

type assertionResponseInput struct {
	ClientDataJSON    string  `json:"clientDataJSON" required:"true" description:"base64url"`
	AuthenticatorData string  `json:"authenticatorData" required:"true" description:"base64url"`
	Signature         string  `json:"signature" required:"true" description:"base64url"`
	UserHandle        *string `json:"userHandle" description:"base64url; null when the authenticator gives none."`
}

// passkeyOf is the step of session id, or the fault of a session without one.
func passkeyOf(id string, s *model.Session) (passkeyJSON, error) {
	if s.Passkey == nil {
		return passkeyJSON{}, fault.New(fault.Conflict, "session %s is not in a passkey step (status: %s): WhatsApp asks for a passkey only while linking some accounts", id, s.Status)
	}
	p := s.Passkey
	return passkeyJSON{Status: passkeyStatus(p.Status), PublicKey: webauthnJSON(p.PublicKey), Code: p.Code, ExpiresAt: timestamp(model.FormatTime(p.ExpiresAt))}, nil
}

func (h *Handler) getPasskey(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	var out passkeyJSON
	if err == nil {
		out, err = passkeyOf(id, s)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, out)
}

func (h *Handler) submitPasskeyAssertion(w http.ResponseWriter, r *http.Request, in passkeyAssertionRequest) {
	id := r.PathValue("sessionId")
	if in.Assertion == nil || in.Assertion.Response == nil {
		writeError(w, r, h.log, fault.InvalidField("assertion", "assertion is required: the PublicKeyCredential's toJSON(), with its response"))
		return
	}
	assertion, err := json.Marshal(in.Assertion)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	s, err := h.m.SubmitPasskeyAssertion(r.Context(), id, model.JSON(assertion))
	var out passkeyJSON
	if err == nil {
		out, err = passkeyOf(id, s)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, out)
}

func (h *Handler) confirmPasskey(w http.ResponseWriter, r *http.Request) {
	s, err := h.m.ConfirmPasskey(r.Context(), r.PathValue("sessionId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out, err := h.sessionJSON(r.Context(), s)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, out)
}
