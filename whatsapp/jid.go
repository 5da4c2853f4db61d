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
	"unicode"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// JID is whatsmeow's address of a user, device or group, named here so the
// packages above this one never import whatsmeow.
type JID = types.JID

// The servers of JIDs: groups (…@g.us), users by phone
// (…@s.whatsapp.net) and users by LID (…@lid).
const (
	GroupServer = types.GroupServer
	UserServer  = types.DefaultUserServer
	LIDServer   = types.HiddenUserServer
)

// ParseJID reads a stored JID string (one this package produced).
func ParseJID(s string) (JID, error) { return types.ParseJID(s) }

// Number lengths of the contract: the digits of the international format,
// country code first.
const (
	minNumberDigits = 7
	maxNumberDigits = 15
)

// MaxRecipientLen bounds a number or JID as given, spaces around it
// aside: the longest a person writes ("(+49) 170 123-45-67") or a JID
// ("491701234567-1611234567@g.us", "98765432101234:12@lid") is far
// shorter, and one of 16 KiB would be read through before it was refused.
const MaxRecipientLen = 128

// checkLength refuses a number or JID (trimmed) longer than
// MaxRecipientLen characters.
func checkLength(field, s string) error {
	if len(s) <= MaxRecipientLen {
		return nil
	}
	if n := utf8.RuneCountInString(s); n > MaxRecipientLen {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", field, MaxRecipientLen, n)
	}
	return nil
}

// ParsePhone reads a phone number field of the contract (a send's number
// when it is not a JID, a contact card's phoneNumber, a group participant,
// the pairing phone) and returns its digits, country code first. It takes
// the number as people write it: '+', spaces, dashes, dots and parentheses
// are dropped ("+49 (1555) 065-4321"); a leading "00" is the international
// call prefix and is dropped too ("0049…"). A number that still begins with
// a single 0 is a national number, whose country the server cannot know:
// it is refused rather than sent to the wrong account, as
// "015550654321@s.whatsapp.net" would be. What remains must be 7 to 15
// digits. field names the input in errors: the REST body's field.
func ParsePhone(field, s string) (string, error) {
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return "", fault.InvalidField(field, "%s must not be empty", field)
	}
	if err := checkLength(field, trimmed); err != nil {
		return "", err
	}
	if strings.Contains(trimmed, "@") {
		return "", fault.InvalidField(field, "%s must be a phone number, not a JID (got %q)", field, fault.Clip(trimmed, fault.QuoteLen))
	}
	var b strings.Builder
	plus := false
	for _, r := range trimmed {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && !plus && b.Len() == 0:
			plus = true
		case isNumberPunct(r):
		default:
			return "", badNumber(field, trimmed)
		}
	}
	digits := b.String()
	if !plus {
		digits = strings.TrimPrefix(digits, "00")
	}
	if strings.HasPrefix(digits, "0") {
		return "", fault.InvalidField(field, "%s: use the international format: country code then number, e.g. 491551234567 (got %q)", field, fault.Clip(trimmed, fault.QuoteLen))
	}
	if len(digits) < minNumberDigits || len(digits) > maxNumberDigits {
		return "", badNumber(field, trimmed)
	}
	return digits, nil
}

// isNumberPunct reports whether r is a character people write between the
// digits of a phone number, which ParsePhone drops.
func isNumberPunct(r rune) bool {
	switch r {
	case ' ', '-', '.', '(', ')':
		return true
	}
	return unicode.IsSpace(r) // a tab, or the no-break space of a pasted number
}

func badNumber(field, s string) error {
	return fault.InvalidField(field, "%s must be a phone number of %d to %d digits in international format: country code then number, e.g. 491551234567 (got %q)",
		field, minNumberDigits, maxNumberDigits, fault.Clip(s, fault.QuoteLen))
}

// ParseRecipient reads the contract's `number`: a phone number as
// ParsePhone reads it (a user on s.whatsapp.net), or a full JID on
// s.whatsapp.net, g.us or lid. field names the input in errors.
func ParseRecipient(field, s string) (types.JID, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return types.JID{}, fault.InvalidField(field, "%s must not be empty", field)
	}
	if err := checkLength(field, s); err != nil {
		return types.JID{}, err
	}
	if !strings.Contains(s, "@") {
		digits, err := ParsePhone(field, s)
		if err != nil {
			return types.JID{}, err
		}
		return types.NewJID(digits, types.DefaultUserServer), nil
	}
	// whatsmeow's ParseJID reads "a@b@c" as a@b, silently dropping the
	// rest: "4915550012222@s.whatsapp.net@g.us" would go to the user.
	if strings.Count(s, "@") > 1 {
		return types.JID{}, fault.InvalidField(field, "%s %q has more than one '@': give a number or one JID such as 491701234567@s.whatsapp.net", field, fault.Clip(s, fault.QuoteLen))
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

// checkDigits checks the user part of a JID: the digits alone, as
// WhatsApp writes them.
func checkDigits(field, s string) error {
	if len(s) < minNumberDigits || len(s) > maxNumberDigits || strings.ContainsFunc(s, notDigit) {
		return fault.InvalidField(field, "%s must be a JID whose user is %d to %d digits, such as 491701234567@s.whatsapp.net (got %q)", field, minNumberDigits, maxNumberDigits, fault.Clip(s, fault.QuoteLen))
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
