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
	"github.com/wagraph/wagraph/internal/middleware"
)

// Prefix is the base path of the contract.
const Prefix = "/api/v1"

// Handler serves the REST contract.
type Handler struct {
	q     graph.QueryResolver
	m     graph.MutationResolver
	s     graph.SessionResolver // the session record's owner
	media MediaSource           // nil: the media route fails
	// redeliverer is nil when none is given: the redeliver route then fails.
	redeliverer Redeliverer
	log         *slog.Logger
	mux         *http.ServeMux

	patterns []string
}

// Deps are what the handler calls. Resolvers is required; the media and
// redelivery routes fail (500, logged) without their dependency.
type Deps struct {
	Resolvers   graph.ResolverRoot
	Media       MediaSource
	Redeliverer Redeliverer
	// MaxBody is --max-body: the limit of the media sends' bodies, and
	// the cap of every route's; 0: the routes' own limits, none for the
	// media sends.
	MaxBody int64
}

// New returns the REST handler for paths under Prefix, serving the route
// table, each route's body bounded by its limit.
func New(d Deps, log *slog.Logger) *Handler {
	root := d.Resolvers
	h := &Handler{q: root.Query(), m: root.Mutation(), s: root.Session(), media: d.Media, redeliverer: d.Redeliverer,
		log: log, mux: http.NewServeMux()}
	for _, rt := range routes() {
		serve := rt.serve
		// The route's body limit comes before anything reads its body.
		h.mux.Handle(rt.muxPattern(), middleware.LimitBody(rt.bodyLimit(d.MaxBody), h.Refuse,
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(h, w, r) })))
		h.patterns = append(h.patterns, rt.pattern())
	}
	return h
}

// Patterns lists the routes served ("GET /session/{sessionId}"), relative
// to Prefix, in the order of the table.
func (h *Handler) Patterns() []string { return append([]string(nil), h.patterns...) }

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
type empty struct {
	_ struct{} `description:"The {} data of operations that return nothing." additionalProperties:"false"`
}
