package app

import (
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/webhook"
)

// newCounters builds what the parts count as they work, before them: the
// event log, the dispatcher, the sessions and the sends are handed it. The
// label values of the counted families are shown at 0 from the start.
func newCounters() *metrics.Counters {
	kinds := []string{string(events.WebhookTest)}
	for _, k := range events.Selectable() {
		kinds = append(kinds, string(k))
	}
	return metrics.NewCounters(metrics.Labels{
		EventKinds:       kinds,
		DeliveryOutcomes: webhook.Outcomes(),
		SendKinds:        messaging.Kinds(),
		SendOutcomes:     []string{messaging.OutcomeSent},
	})
}
