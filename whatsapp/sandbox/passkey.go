package sandbox

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The controls of passkeys: an account that requires one to link a device,
// and its authenticator answering a challenge.

// RequirePasskey makes linking a device of Phone ask for the account's
// passkey from now on.
type RequirePasskey struct {
	Phone string `json:"phone"`
}

func (RequirePasskey) control() Control[RequirePasskey, Done] {
	return Control[RequirePasskey, Done]{
		name:  "require-passkey",
		check: func(q RequirePasskey) error { return checkAccount("phone", q.Phone) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q RequirePasskey) (Done, error) {
			return Done{}, refusal(n.RequirePasskey(q.Phone), q.Phone)
		},
	}
}

// PasskeyAssertion is the authenticator of Phone's passkey answering
// PublicKey, WebAuthn request options in JSON form: a PublicKeyCredential
// in its toJSON() form.
type PasskeyAssertion struct {
	Phone     string          `json:"phone"`
	PublicKey json.RawMessage `json:"publicKey"`
}

func (PasskeyAssertion) control() Control[PasskeyAssertion, json.RawMessage] {
	return Control[PasskeyAssertion, json.RawMessage]{
		name: "passkey-assertion",
		check: func(q PasskeyAssertion) error {
			if err := checkAccount("phone", q.Phone); err != nil {
				return err
			}
			var opts map[string]any
			if json.Unmarshal(q.PublicKey, &opts) != nil {
				return fault.InvalidField("publicKey", "publicKey must be WebAuthn request options in JSON form (Session.passkey.publicKey)")
			}
			return nil
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q PasskeyAssertion) (json.RawMessage, error) {
			out, err := n.PasskeyAssertion(q.Phone, q.PublicKey)
			switch {
			case err == nil:
				return out, nil
			case strings.Contains(err.Error(), "has no passkey"):
				return nil, fault.New(fault.Conflict, "%s has no passkey: call sandboxRequirePasskey first", q.Phone)
			case strings.Contains(err.Error(), "request options"), strings.Contains(err.Error(), "is for "):
				return nil, fault.InvalidField("publicKey", "publicKey: %s", strings.TrimPrefix(err.Error(), "wafake: "))
			}
			return nil, refusal(err, q.Phone)
		},
	}
}
