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
// logged and shown only as an internal error with the request id.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	f := fault.From(err)
	if f == nil {
		id := requestid.From(r.Context())
		log.ErrorContext(r.Context(), "rest handler failed", "err", err, "request_id", id, "method", r.Method, "path", r.URL.Path)
		f = fault.New(fault.Internal, "internal error (request id %s)", id)
	}
	writeJSON(w, StatusOf(f.Code), failure{Status: "failed", Message: f.Message})
}
