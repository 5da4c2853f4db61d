// Package whatsapp is the only package that speaks to WhatsApp: it imports
// go.mau.fi/whatsmeow and turns the gateway's requests into whatsmeow calls.
// It holds the session manager (manager.go, connect.go, session.go: one
// whatsmeow client per session, its status and lifecycle), the operations on
// a connected session (send.go, groups.go, account.go), the conversion of
// whatsmeow's events into the gateway's (inbound.go, message.go,
// protocolmsg.go, poll.go, calls.go, presence.go, history.go, offline.go,
// mediaretry.go for messages and calls; blocklistevents.go, chatevents.go,
// contactevents.go, groupevents.go, labelevents.go for the account's state;
// derived.go for what is read at login) and the parsing of recipients (this
// file). Media arrive here prepared
// (internal/media); the sandbox controls are in whatsapp/sandbox.
package whatsapp

import (
	"strings"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// JID is whatsmeow's address of a user, device or group, named here so the
// packages above this one never import whatsmeow.
type JID = types.JID

// ParseJID reads a stored JID string (one this package produced).
func ParseJID(s string) (JID, error) { return types.ParseJID(s) }

// Number lengths of the contract: international format without '+'.
const (
	minNumberDigits = 7
	maxNumberDigits = 15
)

// ParseRecipient reads the contract's `number`: 7-15 digits (a user), or a
// full JID on s.whatsapp.net, g.us or lid. field names the input in errors.
func ParseRecipient(field, s string) (types.JID, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return types.JID{}, fault.InvalidField(field, "%s must not be empty", field)
	}
	if !strings.Contains(s, "@") {
		if err := checkDigits(field, s); err != nil {
			return types.JID{}, err
		}
		return types.NewJID(s, types.DefaultUserServer), nil
	}
	jid, err := types.ParseJID(s)
	if err != nil {
		return types.JID{}, fault.InvalidField(field, "%s %q is not a JID such as 491701234567@s.whatsapp.net", field, fault.Clip(s, fault.QuoteLen))
	}
	switch jid.Server {
	case types.DefaultUserServer, types.HiddenUserServer:
		if err := checkDigits(field, jid.User); err != nil {
			return types.JID{}, err
		}
	case types.GroupServer:
		if !isGroupUser(jid.User) {
			return types.JID{}, fault.InvalidField(field, "%s %q is not a group JID such as 120363025246125888@g.us", field, fault.Clip(s, fault.QuoteLen))
		}
	default:
		return types.JID{}, fault.InvalidField(field, "%s %q: the server must be s.whatsapp.net, g.us or lid", field, fault.Clip(s, fault.QuoteLen))
	}
	return jid, nil
}

func checkDigits(field, s string) error {
	if len(s) < minNumberDigits || len(s) > maxNumberDigits || strings.ContainsFunc(s, notDigit) {
		return fault.InvalidField(field, "%s must be a phone number of %d to %d digits in international format without '+' (got %q)", field, minNumberDigits, maxNumberDigits, fault.Clip(s, fault.QuoteLen))
	}
	return nil
}

// isGroupUser accepts both group id shapes: the modern digits-only id and the
// old "creator-timestamp" one.
func isGroupUser(u string) bool {
	if u == "" {
		return false
	}
	for _, part := range strings.Split(u, "-") {
		if part == "" || strings.ContainsFunc(part, notDigit) {
			return false
		}
	}
	return strings.Count(u, "-") <= 1
}

func notDigit(r rune) bool { return r < '0' || r > '9' }
