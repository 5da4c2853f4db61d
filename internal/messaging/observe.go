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

// Kinds lists the kinds of sends; a request of any other type is observed
// as "unknown", so a client's type never becomes a series of its own.
func Kinds() []string {
	return []string{TypeText, TypeImage, TypeVideo, TypeDocument, TypeAudio, TypeLocation, TypeContact, TypePoll, TypeSticker, TypeForward}
}

// observe tells the observer, if any, how a send of kind ended: sent,
// scheduled, or failed with err.
func (s *Service) observe(kind string, scheduled bool, err error) {
	if s.obs == nil {
		return
	}
	known := false
	for _, k := range Kinds() {
		known = known || k == kind
	}
	if !known {
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
