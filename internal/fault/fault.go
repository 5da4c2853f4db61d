// Package fault is the one place where errors are classified.
//
// Every layer wraps errors with context (%w); a failure the client caused or
// must know about is created once, here, as an *Error carrying a Code and a
// message that is safe to show. Transports map a Code to their own vocabulary
// with one table each (HTTPStatus here for REST and the sandbox control API,
// graph/errors.go for GraphQL), so a REST failure and the GraphQL error of the
// same operation always come from the same classification. Anything that is
// not an *Error is an internal error whose text never reaches a client.
//
// An *Error made from a lower failure (Wrap) keeps it as its Cause: the
// transports log the cause of WhatsApp and internal failures, and the client
// reads only Message.
//
// The package imports nothing of the project: it is a leaf.
package fault

import (
	"errors"
	"fmt"
)

// Code is the class of a failure.
type Code string

// The classes. Their names follow the GraphQL extension codes of the contract;
// WhatsAppError and WhatsAppTimeout are both WHATSAPP_UNAVAILABLE in GraphQL but
// 502 and 504 in REST.
const (
	Unauthenticated Code = "UNAUTHENTICATED"
	Forbidden       Code = "FORBIDDEN"
	NotFound        Code = "NOT_FOUND"
	Invalid         Code = "BAD_USER_INPUT"
	NotConnected    Code = "NOT_CONNECTED"
	Conflict        Code = "CONFLICT"
	TooLarge        Code = "PAYLOAD_TOO_LARGE"
	Unsupported     Code = "UNSUPPORTED_MEDIA"
	WhatsAppRefused Code = "WHATSAPP_REFUSED"
	WhatsAppError   Code = "WHATSAPP_ERROR"
	WhatsAppTimeout Code = "WHATSAPP_TIMEOUT"
	RateLimited     Code = "RATE_LIMITED"
	// RequestTimeout is a request whose body did not arrive in time
	// (--body-timeout): the client's connection, not the server, was slow.
	RequestTimeout Code = "REQUEST_TIMEOUT"
	Internal       Code = "INTERNAL"
)

// Error is a classified failure. Message is shown to the client as is; Field,
// when set, is the path of the input at fault ("input.url", "events.foo").
// Cause is the failure underneath, for the log only: Error and Message never
// include its text.
type Error struct {
	Code    Code
	Field   string
	Message string
	Cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause, so errors.Is and errors.As see through a fault.
func (e *Error) Unwrap() error { return e.Cause }

// New returns a classified error with a formatted, client-safe message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap is New keeping cause, the error it classifies, for the log.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// IsWhatsApp reports whether c says WhatsApp failed or refused: a failure
// whose cause the operator needs to see in the log.
func IsWhatsApp(c Code) bool {
	return c == WhatsAppRefused || c == WhatsAppError || c == WhatsAppTimeout
}

// InvalidField returns a BAD_USER_INPUT error about one input field. The
// message should name the field and the rule it broke.
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// From returns the classified error inside err, or nil when err is not one.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the class of err: Internal for anything unclassified.
func CodeOf(err error) Code {
	if e := From(err); e != nil {
		return e.Code
	}
	return Internal
}
