package restcompat

import (
	"log/slog"
	"net/http"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/requestid"
)

// StatusOf returns the HTTP status of a fault code: internal/fault's one
// table (GraphQL has its own over the same codes, graph/errors.go).
func StatusOf(c fault.Code) int { return fault.HTTPStatus(c) }

// failure is the envelope of every failure answer.
type failure struct {
	Status  string   `json:"status" required:"true" const:"failed"`
	Message string   `json:"message" required:"true" description:"Human-readable reason naming the field or thing at fault and the rule. Never an internal error dump or a secret."`
	_       struct{} `description:"The failure envelope of every error answer."`
}

// writeError writes the failure envelope of err. An unclassified error is
// shown only as an internal error with the request id. Internal and
// WhatsApp failures are logged with their cause, which the client never
// reads: the operator finds them by the request id.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	f := fault.From(err)
	switch {
	case f == nil:
		logFailure(log, r, slog.LevelError, fault.Internal, err)
		f = fault.New(fault.Internal, "internal error (request id %s)", requestid.From(r.Context()))
	case f.Code == fault.Internal:
		logFailure(log, r, slog.LevelError, f.Code, err)
	case fault.IsWhatsApp(f.Code):
		logFailure(log, r, slog.LevelWarn, f.Code, err)
	}
	writeJSON(w, StatusOf(f.Code), failure{Status: "failed", Message: f.Message})
}

// logFailure logs the failure a request is answered with, once: its cause,
// the request id and the session the request is about.
func logFailure(log *slog.Logger, r *http.Request, level slog.Level, code fault.Code, err error) {
	attrs := []slog.Attr{slog.String("request_id", requestid.From(r.Context()))}
	if id := r.PathValue("sessionId"); id != "" {
		attrs = append(attrs, slog.String("session_id", id))
	}
	attrs = append(attrs, slog.String("code", string(code)), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Any("err", err))
	if f := fault.From(err); f != nil && f.Cause != nil {
		attrs = append(attrs, slog.Any("cause", f.Cause))
	}
	log.LogAttrs(r.Context(), level, "rest handler failed", attrs...)
}
