package webhook

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wagraph/wagraph/ent"
	entattempt "github.com/wagraph/wagraph/ent/attempt"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entevent "github.com/wagraph/wagraph/ent/event"
	entwebhook "github.com/wagraph/wagraph/ent/webhook"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
)

// DefaultDeliveriesPage is the deliveries of a page when none is asked for;
// MaxPageSize bounds it.
const DefaultDeliveriesPage = 20

// DeliveryLog is what a client sees of the outbox: a webhook's deliveries
// with their attempts, newest first, and redelivery. Like the Registry,
// every method takes the id of a session the caller was authorized for.
type DeliveryLog struct {
	db         *ent.Client
	now        func() time.Time
	random     io.Reader
	dispatcher *Dispatcher
}

// NewDeliveryLog returns a DeliveryLog. dispatcher, when not nil, is woken
// by each redelivery; random nil is crypto/rand.
func NewDeliveryLog(db *ent.Client, now func() time.Time, random io.Reader, dispatcher *Dispatcher) *DeliveryLog {
	if random == nil {
		random = rand.Reader
	}
	if now == nil {
		now = time.Now
	}
	return &DeliveryLog{db: db, now: now, random: random, dispatcher: dispatcher}
}

// Wake tells the dispatcher deliveries were stored that are due now (a
// webhook test); without it they wait for its next poll.
func (l *DeliveryLog) Wake() {
	if l.dispatcher != nil {
		l.dispatcher.Wake()
	}
}

// DeliveryNotFound is the error for a delivery that is not in the session.
func DeliveryNotFound(id string) error {
	return fault.New(fault.NotFound, "delivery %s not found", id)
}

// DeliveryPage is a page of a webhook's deliveries, newest first. Each
// delivery carries its event (Edges.Event: its kind) and its attempts in
// order (Edges.AttemptLog).
type DeliveryPage struct {
	Items       []*ent.Delivery
	HasNextPage bool
}

// List returns up to first deliveries of a webhook of the session, newest
// first, after the cursor after (the id of the last delivery of the page
// before; "" starts at the newest). A delivery's id is its cursor: ids sort
// by creation.
func (l *DeliveryLog) List(ctx context.Context, sessionID, webhookID string, first int, after string) (*DeliveryPage, error) {
	if first < 1 || first > MaxPageSize {
		return nil, fault.InvalidField("first", "first must be between 1 and %d (got %d)", MaxPageSize, first)
	}
	if after != "" && !isDeliveryID(after) {
		return nil, fault.InvalidField("after", "after must be the endCursor of a page of this list (got %q)", fault.Clip(after, fault.QuoteLen))
	}
	ok, err := l.db.Webhook.Query().Where(entwebhook.ID(webhookID), entwebhook.SessionID(sessionID)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("get webhook: %w", err)
	}
	if !ok {
		return nil, NotFound(webhookID)
	}
	q := l.withDetails(l.db.Delivery.Query().Where(entdelivery.WebhookID(webhookID)))
	if after != "" {
		q.Where(entdelivery.IDLT(after))
	}
	rows, err := q.Order(ent.Desc(entdelivery.FieldID)).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of webhook %s: %w", webhookID, err)
	}
	page := &DeliveryPage{Items: rows}
	if len(rows) > first {
		page.Items, page.HasNextPage = rows[:first], true
	}
	return page, nil
}

// Get returns a delivery of the session with its event and attempts.
func (l *DeliveryLog) Get(ctx context.Context, sessionID, id string) (*ent.Delivery, error) {
	d, err := l.withDetails(l.db.Delivery.Query().
		Where(entdelivery.ID(id), entdelivery.HasWebhookWith(entwebhook.SessionID(sessionID)))).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, DeliveryNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", id, err)
	}
	return d, nil
}

// OfEvent returns the newest delivery of an event to a webhook of the
// session, with its event and attempts.
func (l *DeliveryLog) OfEvent(ctx context.Context, sessionID, eventID, webhookID string) (*ent.Delivery, error) {
	d, err := l.withDetails(l.db.Delivery.Query().Where(entdelivery.EventID(eventID), entdelivery.WebhookID(webhookID),
		entdelivery.HasWebhookWith(entwebhook.SessionID(sessionID)))).Order(ent.Desc(entdelivery.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, NotFound(webhookID) // the only way to miss it: the webhook went
	}
	if err != nil {
		return nil, fmt.Errorf("get the delivery of event %s: %w", eventID, err)
	}
	return d, nil
}

// Redeliver sends a delivery's event to its webhook again: a new PENDING
// delivery, due now, whose attempts start from one. The event is the same,
// so the webhook-id header is too and receivers can tell the repeat. The
// delivery must be of a webhook of the session (of webhookID, when not
// ""), and that webhook enabled: the deliveries of a disabled one end
// without an attempt.
func (l *DeliveryLog) Redeliver(ctx context.Context, sessionID, webhookID, deliveryID string) (*ent.Delivery, error) {
	q := l.db.Delivery.Query().Where(entdelivery.ID(deliveryID), entdelivery.HasWebhookWith(entwebhook.SessionID(sessionID)))
	if webhookID != "" {
		q.Where(entdelivery.WebhookID(webhookID))
	}
	src, err := q.WithWebhook().WithEvent(func(q *ent.EventQuery) { q.Select(entevent.FieldID, entevent.FieldKind) }).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, DeliveryNotFound(deliveryID)
	}
	if err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", deliveryID, err)
	}
	if !src.Edges.Webhook.Enabled {
		return nil, fault.New(fault.Conflict, "webhook %s is disabled: enable it to redeliver (a webhook test still reaches a disabled webhook)", src.WebhookID)
	}
	now := l.now().UTC()
	id, err := events.NewDeliveryID(now, l.random)
	if err != nil {
		return nil, err
	}
	d, err := l.db.Delivery.Create().SetID(id).SetEventID(src.EventID).SetWebhookID(src.WebhookID).
		SetStatus(entdelivery.StatusPENDING).SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if ent.IsConstraintError(err) {
		// The event or the webhook was deleted since the read.
		return nil, DeliveryNotFound(deliveryID)
	}
	if err != nil {
		return nil, fmt.Errorf("redeliver delivery %s: %w", deliveryID, err)
	}
	// The answer is the delivery as created, not read again: the
	// dispatcher may already be attempting it.
	d.Edges.Event, d.Edges.AttemptLog = src.Edges.Event, []*ent.Attempt{}
	l.Wake()
	return d, nil
}

// withDetails loads what a client sees of a delivery: its event's kind and
// its attempts in order.
func (l *DeliveryLog) withDetails(q *ent.DeliveryQuery) *ent.DeliveryQuery {
	return q.WithEvent(func(q *ent.EventQuery) { q.Select(entevent.FieldID, entevent.FieldKind) }).
		WithAttemptLog(func(q *ent.AttemptQuery) { q.Order(ent.Asc(entattempt.FieldN)) })
}

// isDeliveryID reports whether s has the shape of a delivery id: "dlv_"
// and 26 characters of the ULID alphabet.
func isDeliveryID(s string) bool {
	ulid, ok := strings.CutPrefix(s, "dlv_")
	if !ok || len(ulid) != 26 {
		return false
	}
	for _, c := range ulid {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}
