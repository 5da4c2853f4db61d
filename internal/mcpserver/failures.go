package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/fault"
)

// failures turns a failed call into the tool error an agent reads, from
// internal/fault's one classification as the other transports do: a
// classified failure keeps its message and its GraphQL code, and names
// the argument at fault; anything else is an internal error shown only
// with the request id. Internal and WhatsApp failures are logged with
// their cause, which the agent never reads.
type failures struct {
	log       *slog.Logger
	requestID func(context.Context) string
}

// present is the error the SDK turns into the call's result with
// isError: true, its text the API's message:
//
//	BAD_USER_INPUT (argument to): number "12" is too short: …
func (f failures) present(ctx context.Context, s spec, sessionID string, err error) error {
	fl := fault.From(err)
	switch {
	case fl == nil:
		f.logFailure(ctx, slog.LevelError, s.name, sessionID, fault.Internal, err)
		fl = fault.New(fault.Internal, "internal error (request id %s)", f.requestID(ctx))
	case fl.Code == fault.Internal:
		f.logFailure(ctx, slog.LevelError, s.name, sessionID, fl.Code, err)
	case fault.IsWhatsApp(fl.Code):
		f.logFailure(ctx, slog.LevelWarn, s.name, sessionID, fl.Code, err)
	}
	text := graph.ExtensionCode(fl.Code)
	if fl.Field != "" {
		text += " (argument " + argumentOf(s, fl.Field) + ")"
	}
	return errors.New(text + ": " + fl.Message)
}

// argumentOf is the tool's name for an API field path: a send's input
// object is the tool's arguments themselves (input.text: text), and the
// first part is renamed as the tool names it (number: to; numbers[2]
// stays).
func argumentOf(s spec, field string) string {
	field = strings.TrimPrefix(field, "input.")
	head, rest := field, ""
	if i := strings.IndexAny(field, ".["); i >= 0 {
		head, rest = field[:i], field[i:]
	}
	if a, ok := s.args[head]; ok {
		head = a
	}
	return head + rest
}

func (f failures) logFailure(ctx context.Context, level slog.Level, tool, sessionID string, code fault.Code, err error) {
	attrs := []slog.Attr{slog.String("request_id", f.requestID(ctx))}
	if sessionID != "" {
		attrs = append(attrs, slog.String("session_id", sessionID))
	}
	attrs = append(attrs, slog.String("code", string(code)), slog.String("tool", tool), slog.Any("err", err))
	if fl := fault.From(err); fl != nil && fl.Cause != nil {
		attrs = append(attrs, slog.Any("cause", fl.Cause))
	}
	f.log.LogAttrs(ctx, level, "mcp tool failed", attrs...)
}
