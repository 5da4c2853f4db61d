package restcompat

import (
	"log/slog"
	"net/http"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/requestid"
)

// statusCodes is the one table from fault codes to HTTP status. GraphQL has
// its own table (graph/errors.go) over the same codes.
var statusCodes = map[fault.Code]int{
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.Forbidden:       http.StatusForbidden,
	fault.NotFound:        http.StatusNotFound,
	fault.Invalid:         http.StatusBadRequest,
	fault.NotConnected:    http.StatusConflict,
	fault.Conflict:        http.StatusConflict,
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.Unsupported:     http.StatusUnsupportedMediaType,
	fault.WhatsAppRefused: http.StatusUnprocessableEntity,
	fault.WhatsAppError:   http.StatusBadGateway,
	fault.WhatsAppTimeout: http.StatusGatewayTimeout,
	fault.RateLimited:     http.StatusTooManyRequests,
	fault.RequestTimeout:  http.StatusRequestTimeout,
	fault.Internal:        http.StatusInternalServerError,
}

// StatusOf returns the HTTP status of a fault code.
func StatusOf(c fault.Code) int {
	if s, ok := statusCodes[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type failure struct {
	Status  string `json:"status"`
	Message string `json:"message"`
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
