// Package events owns the session event stream: the table of event kinds, and
// (as the WhatsApp side arrives) the stored event log and the live fan-out to
// webhooks and subscriptions.
package events

import (
	"strings"
	"unicode"
)

// Kind is an event kind as spelled in the seed contract ("messages.update").
type Kind string

// The 27 kinds a webhook can select, in the order of events.md.
var selectable = [...]Kind{
	"call",
	"blocklist.set",
	"blocklist.update",
	"chats.delete",
	"chats.phoneNumberShare",
	"chats.update",
	"chats.upsert",
	"connection.update",
	"contacts.update",
	"contacts.upsert",
	"creds.update",
	"group-participants.update",
	"group.join-request",
	"groups.update",
	"groups.upsert",
	"labels.association",
	"labels.edit",
	"message-receipt.update",
	"messages.delete",
	"messages.media-update",
	"messages.reaction",
	"messages.send",
	"messages.update",
	"messaging-history.set",
	"presence.update",
	"inbound-message.upsert",
	"outbound-message.upsert",
}

// WebhookTest is the kind the service adds to test a webhook; it cannot be
// selected in a webhook's events.
const WebhookTest Kind = "webhook.test"

// Selectable returns the kinds a webhook can select, in contract order.
func Selectable() []Kind { return selectable[:] }

// IsSelectable reports whether k is one of the 27 selectable kinds.
func (k Kind) IsSelectable() bool {
	for _, s := range selectable {
		if s == k {
			return true
		}
	}
	return false
}

// Enum is the kind's GraphQL enum value: upper snake case, where every '.' and
// '-' becomes '_' and camel case is split ("chats.phoneNumberShare" →
// "CHATS_PHONE_NUMBER_SHARE").
func (k Kind) Enum() string {
	var b strings.Builder
	for i, r := range string(k) {
		switch {
		case r == '.' || r == '-':
			b.WriteByte('_')
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// FromEnum returns the kind whose GraphQL enum value is e.
func FromEnum(e string) (Kind, bool) {
	for _, k := range append(Selectable(), WebhookTest) {
		if k.Enum() == e {
			return k, true
		}
	}
	return "", false
}

// SelectableNames returns the selectable kinds as strings, for messages that
// list the valid keys.
func SelectableNames() []string {
	out := make([]string, len(selectable))
	for i, k := range selectable {
		out[i] = string(k)
	}
	return out
}
