package events

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// Envelope is one event as every consumer sees it: a webhook body, a
// subscription payload and the stored log (events.md, Envelope).
type Envelope struct {
	ID        string // "evt_" + a sortable unique id; also the webhook-id header
	Seq       int64  // per session, strictly increasing, no gaps
	Kind      Kind
	SessionID string
	Timestamp time.Time // when the log accepted the event
	Data      json.RawMessage
	// Existing marks an envelope an Append found already stored under the
	// same key (New.Key): nothing was written for it, and it was handed
	// out when it was first stored. It is not part of the wire form.
	Existing bool
	// Memo is shared by every live subscriber the envelope is fanned out
	// to (nil otherwise); it is not part of the wire form.
	Memo *Memo
}

// TimestampLayout is events.md's timestamp: RFC 3339 with milliseconds, UTC.
// It is payload's, the one layout the data, the envelope and the WhatsApp
// adapter's Timestamp write.
const TimestampLayout = payload.TimestampLayout

// wireEnvelope fixes the field names and their order on the wire.
type wireEnvelope struct {
	ID        string          `json:"id"`
	Seq       int64           `json:"seq"`
	Event     Kind            `json:"event"`
	SessionID string          `json:"sessionId"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// MarshalJSON writes the envelope as events.md shows it.
func (e Envelope) MarshalJSON() ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return json.Marshal(wireEnvelope{
		ID: e.ID, Seq: e.Seq, Event: e.Kind, SessionID: e.SessionID,
		Timestamp: e.Timestamp.UTC().Format(TimestampLayout), Data: data,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	var w wireEnvelope
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	ts, err := time.Parse(time.RFC3339Nano, w.Timestamp)
	if err != nil {
		return fmt.Errorf("envelope timestamp: %w", err)
	}
	*e = Envelope{ID: w.ID, Seq: w.Seq, Kind: w.Event, SessionID: w.SessionID, Timestamp: ts.UTC(), Data: w.Data}
	return nil
}

// crockford is the base32 alphabet of ULIDs: no I, L, O or U, so ids read
// aloud or copied by hand survive.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newULID returns a 26-character ULID: 48 bits of Unix milliseconds then 80
// random bits, so ids sort by time (to the millisecond) as strings.
func newULID(t time.Time, random io.Reader) (string, error) {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	if _, err := io.ReadFull(random, b[6:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	// 128 bits in 26 base32 digits: the first digit carries the top 3 bits.
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:]), nil
}
