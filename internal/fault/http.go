package fault

import "net/http"

// HTTPStatus is the one table from codes to HTTP statuses, for every
// transport that answers a fault over HTTP (REST, the sandbox control API):
// 500 for Internal and for a code it does not know. GraphQL answers 200
// with extensions.code (graph/errors.go), and a status only for a request
// refused before it runs.
func HTTPStatus(c Code) int {
	switch c {
	case Unauthenticated:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Invalid:
		return http.StatusBadRequest
	case NotConnected, Conflict:
		return http.StatusConflict
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case Unsupported:
		return http.StatusUnsupportedMediaType
	case WhatsAppRefused:
		return http.StatusUnprocessableEntity
	case WhatsAppError:
		return http.StatusBadGateway
	case WhatsAppTimeout:
		return http.StatusGatewayTimeout
	case RateLimited:
		return http.StatusTooManyRequests
	case RequestTimeout:
		return http.StatusRequestTimeout
	}
	return http.StatusInternalServerError
}
