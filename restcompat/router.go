// Package restcompat serves the frozen /api/v1 REST contract (rest.md). Each
// handler decodes the seed's JSON, calls the GraphQL resolver of the same
// operation and writes the seed's envelope; it holds no business rule, so the
// two APIs cannot drift. Failures are mapped to HTTP status by one table
// (errors.go).
package restcompat

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/wagraph/wagraph/graph"
)

// Prefix is the base path of the contract.
const Prefix = "/api/v1"

// Handler serves the REST contract.
type Handler struct {
	q     graph.QueryResolver
	m     graph.MutationResolver
	s     graph.SessionResolver // the session record's owner
	media mediaSource           // nil when root offers none: the media route then fails
	// redeliverer is nil when root offers none: the redeliver route then fails.
	redeliverer redeliverer
	log         *slog.Logger
	mux         *http.ServeMux

	patterns []string
}

// New returns the REST handler for paths under Prefix, calling the resolvers
// of root.
func New(root graph.ResolverRoot, log *slog.Logger) *Handler {
	h := &Handler{q: root.Query(), m: root.Mutation(), s: root.Session(), log: log, mux: http.NewServeMux()}
	h.media, _ = root.(mediaSource)
	h.redeliverer, _ = root.(redeliverer)
	for _, rt := range h.routes() {
		h.mux.HandleFunc(rt.pattern, rt.fn)
		h.patterns = append(h.patterns, rt.pattern)
	}
	return h
}

type route struct {
	pattern string // "METHOD /path/{param}", relative to Prefix
	fn      http.HandlerFunc
}

// Patterns lists the routes served ("GET /session/{sessionId}"), relative
// to Prefix, in the order of the table: the OpenAPI test holds the
// description to them.
func (h *Handler) Patterns() []string { return append([]string(nil), h.patterns...) }

func (h *Handler) routes() []route {
	return []route{
		{"POST /session", h.createSession},
		{"GET /session", h.listSessions},
		{"GET /session/{sessionId}", h.getSession},
		{"DELETE /session/{sessionId}", h.deleteSession},
		{"POST /session/{sessionId}/connect", h.connectSession},
		{"GET /session/{sessionId}/qr", h.getQR},
		{"POST /session/{sessionId}/pair-phone", h.pairPhone},

		{"POST /session/{sessionId}/message/text", sendHandler(h, h.m.SendText)},
		{"POST /session/{sessionId}/message/image", sendHandler(h, h.m.SendImage)},
		{"POST /session/{sessionId}/message/video", sendHandler(h, h.m.SendVideo)},
		{"POST /session/{sessionId}/message/document", sendHandler(h, h.m.SendDocument)},
		{"POST /session/{sessionId}/message/audio", sendHandler(h, h.m.SendAudio)},
		{"POST /session/{sessionId}/message/location", sendHandler(h, h.m.SendLocation)},
		{"POST /session/{sessionId}/message/contact", sendHandler(h, h.m.SendContact)},
		{"GET /session/{sessionId}/message/{messageId}", h.getMessage},
		{"GET /session/{sessionId}/message/{messageId}/media", h.getMessageMedia},
		{"DELETE /session/{sessionId}/message/{messageId}", h.deleteMessage},
		{"PUT /session/{sessionId}/message/{messageId}", messageAction(h, h.editMessage)},
		{"POST /session/{sessionId}/message/{messageId}/reaction", messageAction(h, h.sendReaction)},
		{"POST /session/{sessionId}/message/{messageId}/forward", messageAction(h, h.forwardMessage)},
		{"GET /session/{sessionId}/message/{messageId}/poll", h.getPoll},
		{"POST /session/{sessionId}/message/poll", sendHandler(h, h.m.SendPoll)},
		{"POST /session/{sessionId}/message/sticker", sendHandler(h, h.m.SendSticker)},
		{"POST /session/{sessionId}/chat/{chat}/read", doneHandler(h, true, h.markRead)},
		{"POST /session/{sessionId}/presence", doneHandler(h, false, h.sendPresence)},
		{"POST /session/{sessionId}/presence/subscribe", doneHandler(h, false, h.subscribePresence)},
		{"POST /session/{sessionId}/call/{callId}/reject", doneHandler(h, false, h.rejectCall)},

		{"POST /session/{sessionId}/group", h.createGroup},
		{"PUT /session/{sessionId}/group/{jid}", h.updateGroup},
		{"POST /session/{sessionId}/group/{jid}/send-invite", h.sendGroupInvite},
		{"POST /session/{sessionId}/group/{jid}/demote", h.demoteGroup},

		{"PUT /session/{sessionId}/display-picture", h.updateDisplayPicture},
		{"PUT /session/{sessionId}/update-profile-name", h.updateProfileName},
		{"PUT /session/{sessionId}/logout", h.logout},
		{"GET /session/{sessionId}/privacy", h.getPrivacy},
		{"PUT /session/{sessionId}/privacy/default-disappearing-mode", privacySetter[modeBody](h, h.m.SetDefaultDisappearingMode)},
		{"PUT /session/{sessionId}/privacy/read-receipts", privacySetter[privacyBody](h, h.m.SetReadReceiptsPrivacy)},
		{"PUT /session/{sessionId}/privacy/groups-add", privacySetter[privacyBody](h, h.m.SetGroupsAddPrivacy)},
		{"PUT /session/{sessionId}/privacy/status", privacySetter[privacyBody](h, h.m.SetStatusPrivacy)},

		{"POST /session/{sessionId}/webhook", h.createWebhook},
		{"GET /session/{sessionId}/webhook", h.listWebhooks},
		{"GET /session/{sessionId}/webhook/{webhookId}", h.getWebhook},
		{"PUT /session/{sessionId}/webhook/{webhookId}", h.updateWebhook},
		{"DELETE /session/{sessionId}/webhook/{webhookId}", h.deleteWebhook},
		{"GET /session/{sessionId}/webhook/{webhookId}/deliveries", h.listDeliveries},
		{"POST /session/{sessionId}/webhook/{webhookId}/deliveries/{deliveryId}/redeliver", h.redeliver},
		{"POST /session/{sessionId}/webhook/{webhookId}/test", h.testWebhook},
	}
}

// Refuse answers a request that was not let in (no valid token, the rate
// limit) with the failure envelope of its error.
func (h *Handler) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, h.log, err)
}

// ServeHTTP serves a request whose path has Prefix stripped.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(&muxFailure{ResponseWriter: w, r: r}, r)
}

// muxFailure replaces ServeMux's plain-text 404 and 405 with the contract's
// failure envelope. Handlers always write JSON, so a non-JSON 404 or 405 can
// only come from the mux itself.
type muxFailure struct {
	http.ResponseWriter
	r       *http.Request
	swallow bool
}

func (m *muxFailure) WriteHeader(code int) {
	if (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) && m.Header().Get("Content-Type") != "application/json" {
		m.swallow = true
		msg := "no endpoint " + m.r.Method + " " + Prefix + m.r.URL.Path
		if code == http.StatusMethodNotAllowed {
			msg = "method " + m.r.Method + " is not allowed on " + Prefix + m.r.URL.Path + "; allowed: " + m.Header().Get("Allow")
		}
		m.Header().Del("X-Content-Type-Options")
		writeJSON(m.ResponseWriter, code, failure{Status: "failed", Message: msg})
		return
	}
	m.ResponseWriter.WriteHeader(code)
}

func (m *muxFailure) Write(b []byte) (int, error) {
	if m.swallow {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

type success struct {
	Status string `json:"status"`
	Data   any    `json:"data"`
}

func ok(w http.ResponseWriter, code int, data any) {
	writeJSON(w, code, success{Status: "success", Data: data})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // a message quoting "&" or "<" stays readable
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		body.Reset()
		body.WriteString(`{"status":"failed","message":"internal error: response could not be encoded"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body.Bytes())
}

// empty is the `{}` data of operations that return nothing.
type empty struct{}
