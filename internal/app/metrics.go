package app

import (
	"log/slog"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/webhook"
	"github.com/wagraph/wagraph/whatsapp"
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

// newMetrics builds what /metrics shows, once what it reads exists: the
// counters, and the sessions by status and the version in use, read from
// the manager and the version keeper at each scrape.
func newMetrics(counters *metrics.Counters, db *ent.Client, manager *whatsapp.Manager, versions *whatsapp.Versions, log *slog.Logger) *metrics.Metrics {
	return metrics.New(metrics.Options{Counters: counters, Sessions: sessions.NewStatusCounts(db, manager), Version: versions, Logger: log})
}
