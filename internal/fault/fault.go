// Package fault is the one place where errors are classified.
//
// Every layer wraps errors with context (%w); a failure the client caused or
// must know about is created once, here, as an *Error carrying a Code and a
// message that is safe to show. Transports map a Code to their own vocabulary
// with one table each (restcompat/errors.go for HTTP, graph/errors.go for
// GraphQL), so a REST failure and the GraphQL error of the same operation always
// come from the same classification. Anything that is not an *Error is an
// internal error whose text never reaches a client.
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
	Internal        Code = "INTERNAL"
)

// Error is a classified failure. Message is shown to the client as is; Field,
// when set, is the path of the input at fault ("input.url", "events.foo").
type Error struct {
	Code    Code
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

// New returns a classified error with a formatted, client-safe message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
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
