package chats

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// A cursor is where a page ends: the list's order key of its last item,
// as opaque base64url JSON. Keyset pages, not offsets: a page deep in a
// long history costs what the first does.
type cursor struct {
	At   int64  `json:"t,omitempty"` // unix nanoseconds
	Row  int    `json:"r,omitempty"`
	ID   int    `json:"i"`
	Name string `json:"n,omitempty"`
}

func (c cursor) String() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c cursor) time() time.Time { return time.Unix(0, c.At).UTC() }

// parseCursor reads the cursor s given in field; nil for none.
func parseCursor(field string, s *string) (*cursor, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(*s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID <= 0 {
		return nil, fault.InvalidField(field, "%s %q is not a cursor of this list: give the endCursor of a page (nextCursor over REST)", field, fault.Clip(*s, fault.QuoteLen))
	}
	return &c, nil
}

// The bounds of a page, for every list of the store (REST's limit too).
const (
	MinPage = 1
	MaxPage = 100
)

// checkFirst checks a page size given in field.
func checkFirst(field string, first int) error {
	if first < MinPage || first > MaxPage {
		return fault.InvalidField(field, "%s must be between %d and %d (got %d)", field, MinPage, MaxPage, first)
	}
	return nil
}
