// Package payload is the vocabulary of session events: the data each kind
// carries (events.md), as Go types with their JSON spelling. It is a leaf
// (it imports nothing of this module), so that the WhatsApp adapter, which
// produces events, and the event log, which stores and delivers them, share
// one definition without the adapter importing the log.
//
// Absent values are written as null rather than left out: receivers written
// from docs/events.md see every documented key of a kind in every event.
package payload

import (
	"encoding/json"
	"time"
)

// Data is the data of one event: one of the types of this package. The
// unexported method keeps it to them, so every payload is documented here.
type Data interface{ isData() }

// TimestampLayout is events.md's timestamp: RFC 3339 with milliseconds, UTC.
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// Time is a moment written in TimestampLayout; the zero time is null.
type Time struct{ time.Time }

// At wraps t.
func At(t time.Time) Time { return Time{t} }

// MarshalJSON writes t in TimestampLayout, or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(TimestampLayout))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}

// Text is a string written as null when empty.
type Text string

// MarshalJSON writes the string, or null when it is empty.
func (s Text) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads a string or null.
func (s *Text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = ""
		return nil
	}
	return json.Unmarshal(b, (*string)(s))
}
