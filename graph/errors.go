package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
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
	fault.RequestTimeout:  "REQUEST_TIMEOUT",
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

// internalError marks an error a resolver returned that is not classified,
// or a resolver's panic (with its stack): its text is for the log only.
type internalError struct {
	err   error
	stack []byte
}

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// markInternal wraps every unclassified resolver error, so the presenter can
// tell it from gqlgen's own errors about the request (argument coercion),
// which are the client's to read.
func markInternal(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil && fault.From(err) == nil {
		err = internalError{err: err}
	}
	return res, err
}

// ErrorPresenter turns an error into the error a client sees: classified
// errors keep their message and get their code; internal errors are shown
// only with the request id; gqlgen's own errors about the request are bad
// user input. Internal and WhatsApp failures are logged, once per field,
// with their cause, which the client never reads.
func ErrorPresenter(log *slog.Logger, requestID RequestIDFunc) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		if gerr.Extensions == nil {
			gerr.Extensions = map[string]any{}
		}
		if f := fault.From(err); f != nil {
			switch {
			case f.Code == fault.Internal:
				logFailure(ctx, log, requestID, slog.LevelError, f.Code, gerr.Path, err, f.Cause, nil)
			case fault.IsWhatsApp(f.Code):
				logFailure(ctx, log, requestID, slog.LevelWarn, f.Code, gerr.Path, err, f.Cause, nil)
			}
			gerr.Message = f.Message
			gerr.Extensions["code"] = ExtensionCode(f.Code)
			if f.Field != "" {
				gerr.Extensions["field"] = f.Field
			}
			return gerr
		}
		var internal internalError
		if errors.As(err, &internal) {
			logFailure(ctx, log, requestID, slog.LevelError, fault.Internal, gerr.Path, internal.err, nil, internal.stack)
			gerr.Message = fmt.Sprintf("internal error (request id %s)", requestID(ctx))
			gerr.Extensions["code"] = "INTERNAL"
			return gerr
		}
		if _, ok := gerr.Extensions["code"]; !ok {
			gerr.Extensions["code"] = "BAD_USER_INPUT"
		}
		return gerr
	}
}

// logFailure logs the failure of one field: its cause, the request id and
// the session the field is about.
func logFailure(ctx context.Context, log *slog.Logger, requestID RequestIDFunc, level slog.Level, code fault.Code,
	path ast.Path, err, cause error, stack []byte) {
	attrs := []slog.Attr{slog.String("request_id", requestID(ctx))}
	if id := sessionArgument(ctx); id != "" {
		attrs = append(attrs, slog.String("session_id", id))
	}
	attrs = append(attrs, slog.String("code", string(code)), slog.String("path", path.String()), slog.Any("err", err))
	if cause != nil {
		attrs = append(attrs, slog.Any("cause", cause))
	}
	if stack != nil {
		attrs = append(attrs, slog.String("stack", string(stack)))
	}
	log.LogAttrs(ctx, level, "graphql resolver failed", attrs...)
}

// sessionIDFields are the fields whose argument id is a session's id; the
// others name it sessionId.
var sessionIDFields = map[string]bool{"session": true, "deleteSession": true, "connectSession": true, "disconnectSession": true}

// sessionArgument returns the id of the session the field (or the nearest
// field above it) names in its arguments; "" when none does.
func sessionArgument(ctx context.Context) string {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		if id, ok := fc.Args["sessionId"].(string); ok {
			return id
		}
		if fc.Field.Field != nil && sessionIDFields[fc.Field.Name] {
			if id, ok := fc.Args["id"].(string); ok {
				return id
			}
		}
	}
	return ""
}

// Recover turns a resolver panic into an internal error carrying the panic
// and its stack. It logs nothing itself: the error presenter logs the
// error, once per field, with the request's ids.
func Recover() graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		return internalError{err: fmt.Errorf("resolver panic: %v", v), stack: debug.Stack()}
	}
}
