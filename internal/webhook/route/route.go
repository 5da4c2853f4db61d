// Package route is the rule of which webhooks are owed an event: the
// webhooks an event names, or, when it names none, every enabled webhook of
// its session that selected its kind.
//
// It lives apart from package webhook because the event log applies it:
// the delivery rows must be written in the transaction that stores the
// event, and package webhook imports the log (internal/events) for its
// kinds and envelopes. So the log imports this package, which imports
// nothing of the project but ent, and the graph stays acyclic:
// internal/events → internal/webhook/route ← internal/webhook → internal/events.
package route

import (
	"context"
	"fmt"
	"slices"

	"github.com/wagraph/wagraph/ent"
	entwebhook "github.com/wagraph/wagraph/ent/webhook"
)

// Event is what the rule reads of an event.
type Event struct {
	SessionID string
	Kind      string
	// Selectable is whether a webhook can select the kind at all
	// (events.Kind.IsSelectable): webhook.test cannot, so only the test
	// that names its webhook delivers it.
	Selectable bool
	// Named, when not nil, are the ids of the webhooks the event is
	// delivered to, exactly: enabled or not, whatever they selected (a
	// webhook's test). Nil is the rule above.
	Named []string
}

// Owed reports whether webhook h is owed e: one of the webhooks e names,
// or, when it names none, an enabled webhook of e's session that selected
// e's kind. A webhook of another session is never owed it.
func Owed(h *ent.Webhook, e Event) bool {
	if h.SessionID != e.SessionID {
		return false
	}
	if e.Named != nil {
		return slices.Contains(e.Named, h.ID)
	}
	return h.Enabled && e.Selectable && slices.Contains(h.Events, e.Kind)
}

// Candidates reads, through the client of the caller's transaction, the
// webhooks of sessions that Owed may pick for some event naming at most
// the webhooks named: the enabled ones and the named ones. It reads only
// the fields Owed needs.
func Candidates(ctx context.Context, hooks *ent.WebhookClient, sessions, named []string) ([]*ent.Webhook, error) {
	out, err := hooks.Query().
		Where(entwebhook.SessionIDIn(sessions...), entwebhook.Or(entwebhook.Enabled(true), entwebhook.IDIn(named...))).
		Select(entwebhook.FieldID, entwebhook.FieldSessionID, entwebhook.FieldEvents, entwebhook.FieldEnabled).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read webhooks: %w", err)
	}
	return out, nil
}
