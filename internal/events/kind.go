// Package events owns the session event stream: the table of event kinds, the
// envelope every consumer sees (events.md), and the durable event log (Log),
// which stores each event with its per-session seq and, in the same
// transaction, one delivery row per webhook owed the event, and the Bus,
// which publishes through the log and, after each commit, hands the events
// to live subscriptions (replay from the log, then live, without gap or
// duplicate; bounded buffers, slow subscribers cut). The webhook dispatcher
// builds on the log's delivery rows.
//
// The WhatsApp adapter spells the kinds it publishes as its own constants
// (it must not import this package); a test here holds the two tables
// together.
package events

import (
	"strings"
	"unicode"
)

// Kind is an event kind as spelled in the seed contract ("messages.update").
type Kind string

// The 27 kinds of events.md, each selectable in a webhook's events.
const (
	Call                    Kind = "call"
	BlocklistSet            Kind = "blocklist.set"
	BlocklistUpdate         Kind = "blocklist.update"
	ChatsDelete             Kind = "chats.delete"
	ChatsPhoneNumberShare   Kind = "chats.phoneNumberShare"
	ChatsUpdate             Kind = "chats.update"
	ChatsUpsert             Kind = "chats.upsert"
	ConnectionUpdate        Kind = "connection.update"
	ContactsUpdate          Kind = "contacts.update"
	ContactsUpsert          Kind = "contacts.upsert"
	CredsUpdate             Kind = "creds.update"
	GroupParticipantsUpdate Kind = "group-participants.update"
	GroupJoinRequest        Kind = "group.join-request"
	GroupsUpdate            Kind = "groups.update"
	GroupsUpsert            Kind = "groups.upsert"
	LabelsAssociation       Kind = "labels.association"
	LabelsEdit              Kind = "labels.edit"
	MessageReceiptUpdate    Kind = "message-receipt.update"
	MessagesDelete          Kind = "messages.delete"
	MessagesMediaUpdate     Kind = "messages.media-update"
	MessagesReaction        Kind = "messages.reaction"
	MessagesSend            Kind = "messages.send"
	MessagesUpdate          Kind = "messages.update"
	MessagingHistorySet     Kind = "messaging-history.set"
	PresenceUpdate          Kind = "presence.update"
	InboundMessageUpsert    Kind = "inbound-message.upsert"
	OutboundMessageUpsert   Kind = "outbound-message.upsert"
)

// selectable lists the kinds a webhook can select, in the order of events.md.
var selectable = [...]Kind{
	Call,
	BlocklistSet,
	BlocklistUpdate,
	ChatsDelete,
	ChatsPhoneNumberShare,
	ChatsUpdate,
	ChatsUpsert,
	ConnectionUpdate,
	ContactsUpdate,
	ContactsUpsert,
	CredsUpdate,
	GroupParticipantsUpdate,
	GroupJoinRequest,
	GroupsUpdate,
	GroupsUpsert,
	LabelsAssociation,
	LabelsEdit,
	MessageReceiptUpdate,
	MessagesDelete,
	MessagesMediaUpdate,
	MessagesReaction,
	MessagesSend,
	MessagesUpdate,
	MessagingHistorySet,
	PresenceUpdate,
	InboundMessageUpsert,
	OutboundMessageUpsert,
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

// IsKnown reports whether k is a kind the service produces: a selectable
// kind or WebhookTest.
func (k Kind) IsKnown() bool { return k == WebhookTest || k.IsSelectable() }

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
