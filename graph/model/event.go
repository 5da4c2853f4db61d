package model

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// JSON is a JSON value written as it is stored: an event's data.
type JSON json.RawMessage

// MarshalGQL writes the value as is (null when empty).
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL reads any input value as JSON.
func (j *JSON) UnmarshalGQL(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON value: %w", err)
	}
	*j = b
	return nil
}

// Event is one event of a session's log. End, set on the last value a
// subscription yields instead of an event, ends the stream with that
// error: its id field fails with it (IDOrEnd), so the transport sends one
// result carrying the error, then completes (gqlgen has no other way to end
// a subscription with an error over every transport).
type Event struct {
	ID         string
	Seq        int
	Kind       EventKind
	SessionID  string
	OccurredAt time.Time
	Data       JSON
	End        error
}

// IDOrEnd is the id field: the event's id, or the error that ends the
// subscription on the value that carries it (End). End's error carries its
// path already: a streamed value is marshalled without its field's context.
func (e *Event) IDOrEnd() (string, error) {
	if e.End != nil {
		return "", e.End
	}
	return e.ID, nil
}
