package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
)

// webhookTestMessage is the message of every webhook.test event.
const webhookTestMessage = "This is a test event from wagraph: answer 2xx to acknowledge it."

// testWebhook appends a webhook.test event owed to the webhook id alone
// and returns its delivery as stored.
func (r *Resolver) testWebhook(ctx context.Context, sessionID, id string) (*model.Delivery, error) {
	_, s, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	w, err := r.Registry.Get(ctx, s.ID, id)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(&payload.WebhookTest{WebhookID: w.ID, Message: webhookTestMessage})
	if err != nil {
		return nil, fmt.Errorf("encode the test event: %w", err)
	}
	envs, err := r.Events.Publish(ctx, s.ID, []events.New{{Kind: events.WebhookTest, Data: data, Webhooks: []string{w.ID}}})
	if err != nil {
		return nil, fmt.Errorf("append the test event of webhook %s: %w", w.ID, err)
	}
	d, err := r.Deliveries.OfEvent(ctx, s.ID, envs[0].ID, w.ID)
	if err != nil {
		return nil, err
	}
	// Read first, then woken: the answer is the delivery as stored, not a
	// race with its first attempt.
	r.Deliveries.Wake()
	return toDelivery(d), nil
}

// RedeliverOf is redeliver restricted to the deliveries of one webhook
// (webhookID "" is any of the session's): the REST path names the webhook.
func (r *Resolver) RedeliverOf(ctx context.Context, sessionID, webhookID, deliveryID string) (*model.Delivery, error) {
	_, s, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	d, err := r.Deliveries.Redeliver(ctx, s.ID, webhookID, deliveryID)
	if err != nil {
		return nil, err
	}
	return toDelivery(d), nil
}

// deliveries is the deliveries query.
func (r *Resolver) deliveries(ctx context.Context, sessionID, webhookID string, first int, after string) (*model.DeliveryConnection, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	page, err := r.Deliveries.List(ctx, sessionID, webhookID, first, after)
	if err != nil {
		return nil, err
	}
	out := &model.DeliveryConnection{Edges: make([]*model.DeliveryEdge, len(page.Items)), PageInfo: &model.PageInfo{HasNextPage: page.HasNextPage}}
	for i, d := range page.Items {
		out.Edges[i] = &model.DeliveryEdge{Cursor: d.ID, Node: toDelivery(d)}
	}
	if n := len(page.Items); n > 0 {
		out.PageInfo.EndCursor = &page.Items[n-1].ID
	}
	return out, nil
}

// toDelivery converts a delivery loaded with its event and attempts.
func toDelivery(d *ent.Delivery) *model.Delivery {
	m := &model.Delivery{
		ID:         d.ID,
		EventID:    d.EventID,
		Attempt:    d.Attempts,
		Status:     model.DeliveryStatus(d.Status),
		StatusCode: d.LastStatusCode,
		Error:      nonEmpty(d.LastError),
		CreatedAt:  d.CreatedAt,
		Attempts:   make([]*model.DeliveryAttempt, 0, len(d.Edges.AttemptLog)),
	}
	if ev := d.Edges.Event; ev != nil {
		m.Event = model.EventKind(events.Kind(ev.Kind).Enum())
	}
	if d.LastDurationMs != nil {
		ms := int(*d.LastDurationMs)
		m.DurationMs = &ms
	}
	for _, a := range d.Edges.AttemptLog {
		m.Attempts = append(m.Attempts, &model.DeliveryAttempt{
			N: a.N, StatusCode: a.StatusCode, DurationMs: int(a.DurationMs), Error: nonEmpty(a.Error), At: a.At,
		})
	}
	return m
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
