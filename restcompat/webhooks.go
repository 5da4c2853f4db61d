package restcompat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
)

// The bodies of POST and PUT …/webhook: every field optional when decoded;
// the resolver knows which are required. They differ only in what the
// document says (a struct conversion turns one into the other).
type (
	createWebhookRequest struct {
		URL         *string             `json:"url" required:"true" nullable:"false" description:"Absolute http or https URL the deliveries are posted to: at most 2048 characters, no #fragment, a port from 1 to 65535; a URL naming a loopback, private or link-local address (localhost, 127.0.0.1, 10.x, 169.254.169.254, ::1, …) is refused unless the server runs with --allow-private-urls (sandbox mode allows them)." minLength:"1" maxLength:"2048" pattern:"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+[^#\\s]*$" format:"uri"`
		DisplayName *string             `json:"displayName" nullable:"false" description:"A label for people, at most 100 characters, no control characters." maxLength:"100" pattern:"^[^\\u0000-\\u001F\\u007F]*$"`
		Enabled     *bool               `json:"enabled" nullable:"false" description:"Deliver events (true, the default on creation) or hold them back."`
		Events      webhookEventsInput  `json:"events"`
		Headers     webhookHeadersInput `json:"headers"`
		_           struct{}            `description:"A new webhook; only url is required. Without events, no event is selected."`
	}
	updateWebhookRequest struct {
		URL         *string             `json:"url" nullable:"false" description:"Absolute http or https URL the deliveries are posted to: at most 2048 characters, no #fragment, a port from 1 to 65535; a URL naming a loopback, private or link-local address (localhost, 127.0.0.1, 10.x, 169.254.169.254, ::1, …) is refused unless the server runs with --allow-private-urls (sandbox mode allows them)." minLength:"1" maxLength:"2048" pattern:"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+[^#\\s]*$" format:"uri"`
		DisplayName *string             `json:"displayName" nullable:"false" description:"A label for people, at most 100 characters, no control characters." maxLength:"100" pattern:"^[^\\u0000-\\u001F\\u007F]*$"`
		Enabled     *bool               `json:"enabled" nullable:"false" description:"Deliver events (true, the default on creation) or hold them back."`
		Events      webhookEventsInput  `json:"events"`
		Headers     webhookHeadersInput `json:"headers"`
		_           struct{}            `description:"Absent fields keep their value; a given events object replaces the selection."`
	}
)

// toInput translates the seed's shapes (events and headers as objects) into
// the resolver's input. A given events object selects exactly its true keys.
func (req updateWebhookRequest) toInput() (model.WebhookInput, error) {
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
	ID          string            `json:"id" required:"true" description:"The webhook's id."`
	URL         string            `json:"url" required:"true" nullable:"false" description:"Where deliveries are posted." format:"uri"`
	DisplayName string            `json:"displayName" required:"true" description:"A label for people (may be empty)."`
	Enabled     bool              `json:"enabled" required:"true" description:"Whether events are delivered."`
	Events      webhookEvents     `json:"events" required:"true"`
	Headers     map[string]string `json:"headers" required:"true" description:"Extra headers sent with each delivery."`
	CreatedAt   timestamp         `json:"createdAt" required:"true"`
	WaSessionID string            `json:"waSessionId" required:"true" description:"The session the webhook belongs to."`
	_           struct{}          `description:"A webhook of a session."`
}

// createdWebhookJSON is a webhook just created: the only answer with its
// secret.
type createdWebhookJSON struct {
	webhookJSON
	Secret string   `json:"secret" required:"true" description:"Signs the deliveries; shown only at creation." pattern:"^whsec_"`
	_      struct{} `description:"A webhook just created, with its secret."`
}

// selectionKey is one key of a webhookEvents's object, computed once: the
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

func (s webhookEvents) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 32*len(selectionKeys))), nil
}

// UnmarshalJSON reads what MarshalJSON writes (a client's view of a
// webhook, the document's examples): the true keys are the selection.
func (s *webhookEvents) UnmarshalJSON(b []byte) error {
	var keys map[string]bool
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	*s = (*s)[:0]
	for _, k := range selectionKeys {
		on, ok := keys[strings.Trim(string(k.prefix), `":`)]
		if !ok {
			return fmt.Errorf("events: no key %s", k.prefix)
		}
		if on {
			*s = append(*s, k.enum)
		}
	}
	if len(keys) != len(selectionKeys) {
		return fmt.Errorf("events: %d keys, want %d", len(keys), len(selectionKeys))
	}
	return nil
}

func toWebhookJSON(m *model.Webhook) webhookJSON {
	hs := make(map[string]string, len(m.Headers))
	for _, h := range m.Headers {
		hs[h.Name] = h.Value
	}
	return webhookJSON{
		ID: m.ID, URL: m.URL, DisplayName: m.DisplayName, Enabled: m.Enabled,
		Events: webhookEvents(m.Events), Headers: hs,
		CreatedAt: timestamp(model.FormatTime(m.CreatedAt)), WaSessionID: m.SessionID,
	}
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, req createWebhookRequest) {
	in, err := updateWebhookRequest(req).toInput()
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.CreateWebhook(r.Context(), r.PathValue("sessionId"), in)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusCreated, createdWebhookJSON{webhookJSON: toWebhookJSON(res.Webhook), Secret: res.Secret})
}

func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request, req updateWebhookRequest) {
	in, err := req.toInput()
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
	Status   string        `json:"status" required:"true" const:"success"`
	Data     []webhookJSON `json:"data" required:"true"`
	Page     string        `json:"page" required:"true" description:"The page number, as a string." pattern:"^[0-9]+$"`
	PageSize string        `json:"pageSize" required:"true" description:"The page size, as a string." pattern:"^[0-9]+$"`
	Total    int           `json:"total" required:"true" description:"Number of webhooks of the session." minimum:"0"`
	_        struct{}      `description:"One page of webhooks; page and pageSize are strings."`
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
