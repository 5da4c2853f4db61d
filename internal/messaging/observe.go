package messaging

import (
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
)

// Observer is told how each send ended: the metrics count sends by kind and
// outcome. It must not block.
type Observer interface {
	Sent(kind, outcome string)
}

// The outcomes of a send besides its failures, which are the fault code in
// lower case ("not_connected", "whatsapp_error", "internal", …).
const (
	OutcomeSent      = "sent"
	OutcomeScheduled = "scheduled" // stored for the scheduler, observed again when made
)

// observe tells the observer, if any, how a send of kind ended: sent,
// scheduled, or failed with err.
func (s *Service) observe(kind string, scheduled bool, err error) {
	if s.obs == nil {
		return
	}
	// A request of a type no kind has is observed as "unknown", so a
	// client's type never becomes a series of its own.
	if _, known := lookupKind(kind); !known {
		kind = "unknown"
	}
	outcome := OutcomeSent
	switch {
	case err != nil:
		outcome = outcomeOf(err)
	case scheduled:
		outcome = OutcomeScheduled
	}
	s.obs.Sent(kind, outcome)
}

func outcomeOf(err error) string {
	return strings.ToLower(string(fault.CodeOf(err)))
}
