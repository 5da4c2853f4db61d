package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/wagraph/wagraph/internal/fault"
)

// extensionCodes is the one table from fault codes to GraphQL
// extensions.code. REST has its own table (restcompat/errors.go) over the
// same codes.
var extensionCodes = map[fault.Code]string{
	fault.Unauthenticated: "UNAUTHENTICATED",
	fault.Forbidden:       "FORBIDDEN",
	fault.NotFound:        "NOT_FOUND",
	fault.Invalid:         "BAD_USER_INPUT",
	fault.NotConnected:    "NOT_CONNECTED",
	fault.Conflict:        "CONFLICT",
	fault.TooLarge:        "PAYLOAD_TOO_LARGE",
	fault.Unsupported:     "UNSUPPORTED_MEDIA",
	fault.WhatsAppRefused: "WHATSAPP_REFUSED",
	fault.WhatsAppError:   "WHATSAPP_UNAVAILABLE",
	fault.WhatsAppTimeout: "WHATSAPP_UNAVAILABLE",
	fault.RateLimited:     "RATE_LIMITED",
	fault.Internal:        "INTERNAL",
}

// ExtensionCode returns the extensions.code of a fault code.
func ExtensionCode(c fault.Code) string {
	if s, ok := extensionCodes[c]; ok {
		return s
	}
	return "INTERNAL"
}

// RequestIDFunc returns the request id carried by a context, for the message
// of an internal error.
type RequestIDFunc func(context.Context) string

// internalError marks an error a resolver returned that is not classified:
// its text is for the log only.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// markInternal wraps every unclassified resolver error, so the presenter can
// tell it from gqlgen's own errors about the request (argument coercion),
// which are the client's to read.
func markInternal(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil && fault.From(err) == nil {
		err = internalError{err}
	}
	return res, err
}

// ErrorPresenter turns an error into the error a client sees: classified
// errors keep their message and get their code; internal errors are logged
// and shown only with the request id; gqlgen's own errors about the request
// are bad user input.
func ErrorPresenter(log *slog.Logger, requestID RequestIDFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		if f := fault.From(err); f != nil {
			gerr.Message = f.Message
			gerr.Extensions["code"] = ExtensionCode(f.Code)
			if f.Field != "" {
				gerr.Extensions["field"] = f.Field
			}
			return gerr
		}
		var internal internalError
		if errors.As(err, &internal) {
			id := requestID(ctx)
			log.ErrorContext(ctx, "graphql resolver failed", "err", internal.err, "request_id", id, "path", gerr.Path.String())
			gerr.Message = fmt.Sprintf("internal error (request id %s)", id)
			gerr.Extensions["code"] = "INTERNAL"
			return gerr
		}
		if _, ok := gerr.Extensions["code"]; !ok {
			gerr.Extensions["code"] = "BAD_USER_INPUT"
		}
		return gerr
	}
}

// Recover turns a resolver panic into an internal error.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		log.ErrorContext(ctx, "graphql resolver panicked", "panic", fmt.Sprint(v))
		return internalError{errors.New("resolver panic")}
	}
}
