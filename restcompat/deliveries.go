package restcompat

import (
	"context"
	"errors"
	"net/http"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
)

// Redeliverer is the resolver of the REST redeliver path, which names the
// webhook: the root resolver (graph.Resolver) offers redeliver restricted to
// one webhook beside the GraphQL mutation.
type Redeliverer interface {
	RedeliverOf(ctx context.Context, sessionID, webhookID, deliveryID string) (*model.Delivery, error)
}

var errNoRedeliverer = errors.New("restcompat: no redeliverer was given")

// deliveryJSON is a delivery as the deliveries query gives it, the kind
// spelled as in the seed ("messages.update").
type deliveryJSON struct {
	ID         string                `json:"id" required:"true"`
	EventID    string                `json:"eventId" required:"true" description:"The event's id: the webhook-id header of every attempt, redeliveries included."`
	Event      string                `json:"event" required:"true" description:"The event's kind, as in a webhook's events (webhook.test for a test)."`
	Attempt    int                   `json:"attempt" required:"true" description:"Attempts made so far." minimum:"0"`
	Status     string                `json:"status" required:"true" description:"PENDING: an attempt is due or scheduled. DELIVERED: a 2xx answer ended it. FAILED: the last attempt of the retry schedule failed, the receiver answered 410 (which disabled the webhook), or the webhook was disabled when it came due." enum:"PENDING,DELIVERED,FAILED"`
	StatusCode *int                  `json:"statusCode" required:"true"`
	DurationMs *int                  `json:"durationMs" required:"true"`
	Error      *string               `json:"error" required:"true"`
	CreatedAt  timestamp             `json:"createdAt" required:"true"`
	Attempts   []deliveryAttemptJSON `json:"attempts" required:"true" description:"Every attempt, first first."`
	_          struct{}              `description:"One event owed to one webhook. statusCode, durationMs and error describe the last attempt (null before the first)."`
}

type deliveryAttemptJSON struct {
	N          int       `json:"n" required:"true" description:"1 for the first attempt." minimum:"1"`
	StatusCode *int      `json:"statusCode" required:"true" description:"The receiver's HTTP status; null when no answer came (network error, timeout, refused address)."`
	DurationMs int       `json:"durationMs" required:"true" minimum:"0"`
	Error      *string   `json:"error" required:"true" description:"Why the attempt did not deliver; null when it did."`
	At         timestamp `json:"at" required:"true"`
}

func toDeliveryJSON(m *model.Delivery) deliveryJSON {
	kind, _ := events.FromEnum(string(m.Event))
	out := deliveryJSON{
		ID: m.ID, EventID: m.EventID, Event: string(kind), Attempt: m.Attempt, Status: string(m.Status),
		StatusCode: m.StatusCode, DurationMs: m.DurationMs, Error: m.Error, CreatedAt: timestamp(model.FormatTime(m.CreatedAt)),
		Attempts: make([]deliveryAttemptJSON, len(m.Attempts)),
	}
	for i, a := range m.Attempts {
		out.Attempts[i] = deliveryAttemptJSON{N: a.N, StatusCode: a.StatusCode, DurationMs: a.DurationMs, Error: a.Error, At: timestamp(model.FormatTime(a.At))}
	}
	return out
}

// deliveryPage is the list envelope of the delivery log: the data, then
// where the page ends (pass endCursor as after for the next page).
type deliveryPage struct {
	Status      string         `json:"status" required:"true" const:"success"`
	Data        []deliveryJSON `json:"data" required:"true"`
	HasNextPage bool           `json:"hasNextPage" required:"true"`
	EndCursor   *string        `json:"endCursor" required:"true" description:"Pass as after for the next page; null on an empty page."`
	_           struct{}       `description:"One page of a webhook's deliveries, newest first."`
}

func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) {
	first, err := queryInt(r, "first")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	after, err := queryString(r, "after")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.q.Deliveries(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId"), first, after)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := deliveryPage{Status: "success", Data: make([]deliveryJSON, len(res.Edges)),
		HasNextPage: res.PageInfo.HasNextPage, EndCursor: res.PageInfo.EndCursor}
	for i, e := range res.Edges {
		out.Data[i] = toDeliveryJSON(e.Node)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) {
	if h.redeliverer == nil {
		writeError(w, r, h.log, errNoRedeliverer)
		return
	}
	res, err := h.redeliverer.RedeliverOf(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId"), r.PathValue("deliveryId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toDeliveryJSON(res))
}

func (h *Handler) testWebhook(w http.ResponseWriter, r *http.Request) {
	res, err := h.m.TestWebhook(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toDeliveryJSON(res))
}
