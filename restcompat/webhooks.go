package restcompat

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
)

// webhookRequest is the body of POST and PUT …/webhook: every field optional
// here; the resolver knows which are required.
type webhookRequest struct {
	URL         *string                    `json:"url"`
	DisplayName *string                    `json:"displayName"`
	Enabled     *bool                      `json:"enabled"`
	Events      map[string]json.RawMessage `json:"events"`
	Headers     map[string]json.RawMessage `json:"headers"`
}

// toInput translates the seed's shapes (events and headers as objects) into
// the resolver's input. A given events object selects exactly its true keys.
func (req webhookRequest) toInput() (model.WebhookInput, error) {
	in := model.WebhookInput{URL: req.URL, DisplayName: req.DisplayName, Enabled: req.Enabled}
	if req.Events != nil {
		in.Events = []model.EventKind{}
		for _, k := range sortedKeys(req.Events) {
			kind := events.Kind(k)
			if !kind.IsSelectable() {
				return in, fault.InvalidField("events."+k, "unknown event key %q in events; valid keys: %s", shortPath(k), strings.Join(events.SelectableNames(), ", "))
			}
			var on bool
			if jsonType(req.Events[k]) != "boolean" || json.Unmarshal(req.Events[k], &on) != nil {
				return in, fault.InvalidField("events."+k, "events.%s must be a boolean (got %s)", shortPath(k), jsonType(req.Events[k]))
			}
			if on {
				in.Events = append(in.Events, model.EventKind(kind.Enum()))
			}
		}
	}
	if req.Headers != nil {
		in.Headers = []*model.HeaderInput{}
		for _, name := range sortedKeys(req.Headers) {
			var v string
			if jsonType(req.Headers[name]) != "string" || json.Unmarshal(req.Headers[name], &v) != nil {
				return in, fault.InvalidField("headers."+name, "headers.%s must be a string (got %s)", shortPath(name), jsonType(req.Headers[name]))
			}
			in.Headers = append(in.Headers, &model.HeaderInput{Name: name, Value: v})
		}
	}
	return in, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// webhookJSON is <webhook> of rest.md.
type webhookJSON struct {
	ID          string            `json:"id"`
	URL         string            `json:"url"`
	DisplayName string            `json:"displayName"`
	Enabled     bool              `json:"enabled"`
	Events      eventSelection    `json:"events"`
	Headers     map[string]string `json:"headers"`
	CreatedAt   string            `json:"createdAt"`
	WaSessionID string            `json:"waSessionId"`
	Secret      string            `json:"secret,omitempty"`
}

// eventSelection writes all 27 keys, in contract order, true when selected.
type eventSelection []model.EventKind

// selectionKey is one key of an eventSelection's object, computed once: the
// answer of a webhook list wrote them all for every webhook.
type selectionKey struct {
	prefix []byte // the quoted key and its colon
	enum   model.EventKind
}

// selectionKeys is read only: built once, in contract order.
var selectionKeys = func() []selectionKey {
	out := make([]selectionKey, len(events.Selectable()))
	for i, k := range events.Selectable() {
		out[i] = selectionKey{prefix: []byte(strconv.Quote(string(k)) + ":"), enum: model.EventKind(k.Enum())}
	}
	return out
}()

func (s eventSelection) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 32*len(selectionKeys))), nil
}

func toWebhookJSON(m *model.Webhook) webhookJSON {
	hs := make(map[string]string, len(m.Headers))
	for _, h := range m.Headers {
		hs[h.Name] = h.Value
	}
	return webhookJSON{
		ID: m.ID, URL: m.URL, DisplayName: m.DisplayName, Enabled: m.Enabled,
		Events: eventSelection(m.Events), Headers: hs,
		CreatedAt: model.FormatTime(m.CreatedAt), WaSessionID: m.SessionID,
	}
}

func (h *Handler) decodeWebhook(r *http.Request) (model.WebhookInput, error) {
	var req webhookRequest
	if err := decodeBody(r, &req, false); err != nil {
		return model.WebhookInput{}, err
	}
	return req.toInput()
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request) {
	in, err := h.decodeWebhook(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.CreateWebhook(r.Context(), r.PathValue("sessionId"), in)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := toWebhookJSON(res.Webhook)
	out.Secret = res.Secret
	ok(w, http.StatusCreated, out)
}

func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request) {
	in, err := h.decodeWebhook(r)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.UpdateWebhook(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId"), in)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toWebhookJSON(res))
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request) {
	res, err := h.q.Webhook(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toWebhookJSON(res))
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if _, err := h.m.DeleteWebhook(r.Context(), r.PathValue("sessionId"), r.PathValue("webhookId")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

// webhookPage is the seed's list envelope: page and pageSize as strings.
type webhookPage struct {
	Status   string        `json:"status"`
	Data     []webhookJSON `json:"data"`
	Page     string        `json:"page"`
	PageSize string        `json:"pageSize"`
	Total    int           `json:"total"`
}

func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request) {
	page, err := queryInt(r, "page")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	size, err := queryInt(r, "pageSize")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.q.Webhooks(r.Context(), r.PathValue("sessionId"), page, size)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := webhookPage{Status: "success", Data: make([]webhookJSON, len(res.Items)),
		Page: strconv.Itoa(res.Page), PageSize: strconv.Itoa(res.PageSize), Total: res.Total}
	for i, m := range res.Items {
		out.Data[i] = toWebhookJSON(m)
	}
	writeWebhookPage(w, out)
}

// writeWebhookPage writes the list's answer as writeJSON would, by hand.
func writeWebhookPage(w http.ResponseWriter, out webhookPage) {
	body := out.appendJSON(make([]byte, 0, 1024*(1+len(out.Data))))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
