package events

import (
	"io"
	"time"

	"github.com/wagraph/wagraph/ent"
)

// EnvelopeOf returns the envelope of a stored event, as it was appended:
// the body of its webhook deliveries.
func EnvelopeOf(e *ent.Event) Envelope { return envelopeOf(e) }

// NewDeliveryID returns the id of a delivery made at t: "dlv_" and a ULID,
// like the ids of the deliveries Append makes, so a webhook's deliveries
// sort by creation (to the millisecond) by id alone.
func NewDeliveryID(t time.Time, random io.Reader) (string, error) {
	id, err := newULID(t, random)
	if err != nil {
		return "", err
	}
	return "dlv_" + id, nil
}
