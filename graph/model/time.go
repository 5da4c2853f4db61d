// Package model holds the GraphQL types: those gqlgen generates from the
// schema (models_gen.go) and the scalars written by hand.
package model

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// TimeLayout is how every timestamp of both APIs is written: UTC with
// milliseconds, the events' layout (FormatTime writes UTC, so its "Z" is
// what the zone offset of an RFC 3339 layout would print).
const TimeLayout = payload.TimestampLayout

// FormatTime writes t the way both APIs do.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// MarshalTime writes the Time scalar.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		io.WriteString(w, strconv.Quote(FormatTime(t)))
	})
}

// UnmarshalTime reads the Time scalar from an RFC 3339 string.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("time must be an RFC 3339 string")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time must be an RFC 3339 string such as 2026-11-22T10:04:05Z")
	}
	return t, nil
}
