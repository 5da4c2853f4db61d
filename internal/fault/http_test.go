package fault_test

import (
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestHTTPStatus pins the table REST's frozen contract and the sandbox
// control API answer with.
func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		code fault.Code
		want int
	}{
		{fault.Unauthenticated, http.StatusUnauthorized},
		{fault.Forbidden, http.StatusForbidden},
		{fault.NotFound, http.StatusNotFound},
		{fault.Invalid, http.StatusBadRequest},
		{fault.NotConnected, http.StatusConflict},
		{fault.Conflict, http.StatusConflict},
		{fault.TooLarge, http.StatusRequestEntityTooLarge},
		{fault.Unsupported, http.StatusUnsupportedMediaType},
		{fault.WhatsAppRefused, http.StatusUnprocessableEntity},
		{fault.WhatsAppError, http.StatusBadGateway},
		{fault.WhatsAppTimeout, http.StatusGatewayTimeout},
		{fault.RateLimited, http.StatusTooManyRequests},
		{fault.RequestTimeout, http.StatusRequestTimeout},
		{fault.Internal, http.StatusInternalServerError},
		{fault.Code("SOMETHING_NEW"), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := fault.HTTPStatus(tt.code); got != tt.want {
			t.Errorf("HTTPStatus(%s) = %d, want %d", tt.code, got, tt.want)
		}
	}
}
