package restcompat

import (
	"context"
	"errors"
	"net/http"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
)

// redeliverer is the resolver of the REST redeliver path, which names the
// webhook: the root resolver (graph.Resolver) offers redeliver restricted to
// one webhook beside the GraphQL mutation.
type redeliverer interface {
	RedeliverOf(ctx context.Context, sessionID, webhookID, deliveryID string) (*model.Delivery, error)
}

var errNoRedeliverer = errors.New("restcompat: the resolver root offers no redelivery by webhook")

// deliveryJSON is a delivery as the deliveries query gives it, the kind
// spelled as in the seed ("messages.update").
type deliveryJSON struct {
	ID         string        `json:"id"`
	EventID    string        `json:"eventId"`
	Event      string        `json:"event"`
	Attempt    int           `json:"attempt"`
	Status     string        `json:"status"`
	StatusCode *int          `json:"statusCode"`
	DurationMs *int          `json:"durationMs"`
	Error      *string       `json:"error"`
	CreatedAt  string        `json:"createdAt"`
	Attempts   []attemptJSON `json:"attempts"`
}

type attemptJSON struct {
	N          int     `json:"n"`
	StatusCode *int    `json:"statusCode"`
	DurationMs int     `json:"durationMs"`
	Error      *string `json:"error"`
	At         string  `json:"at"`
}

func toDeliveryJSON(m *model.Delivery) deliveryJSON {
	kind, _ := events.FromEnum(string(m.Event))
	out := deliveryJSON{
		ID: m.ID, EventID: m.EventID, Event: string(kind), Attempt: m.Attempt, Status: string(m.Status),
		StatusCode: m.StatusCode, DurationMs: m.DurationMs, Error: m.Error, CreatedAt: model.FormatTime(m.CreatedAt),
		Attempts: make([]attemptJSON, len(m.Attempts)),
	}
	for i, a := range m.Attempts {
		out.Attempts[i] = attemptJSON{N: a.N, StatusCode: a.StatusCode, DurationMs: a.DurationMs, Error: a.Error, At: model.FormatTime(a.At)}
	}
	return out
}

// deliveryPage is the list envelope of the delivery log: the data, then
// where the page ends (pass endCursor as after for the next page).
type deliveryPage struct {
	Status      string         `json:"status"`
	Data        []deliveryJSON `json:"data"`
	HasNextPage bool           `json:"hasNextPage"`
	EndCursor   *string        `json:"endCursor"`
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
