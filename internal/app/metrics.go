package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/webhook"
	"github.com/wagraph/wagraph/whatsapp"
)

// newMetrics builds what /metrics shows: sessions and the version are read
// from the manager and the version keeper at each scrape; the label values
// of the counted families are shown at 0 from the start.
func newMetrics(db *ent.Client, manager *whatsapp.Manager, versions *whatsapp.Versions, log *slog.Logger) *metrics.Metrics {
	kinds := []string{string(events.WebhookTest)}
	for _, k := range events.Selectable() {
		kinds = append(kinds, string(k))
	}
	return metrics.New(metrics.Options{
		Sessions:         sessionCounts{db: db, manager: manager},
		Version:          versions,
		EventKinds:       kinds,
		DeliveryOutcomes: webhook.Outcomes(),
		SendKinds:        messaging.Kinds(),
		SendOutcomes:     []string{messaging.OutcomeSent},
		Logger:           log,
	})
}

// sessionCounts counts every session of the table by the status the
// manager answers for it.
type sessionCounts struct {
	db      *ent.Client
	manager *whatsapp.Manager
}

func (s sessionCounts) SessionsByStatus(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.Session.Query().Select(entsession.FieldStatus).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	stored := make(map[string]whatsapp.Status, len(rows))
	for _, r := range rows {
		stored[r.ID] = whatsapp.Status(r.Status)
	}
	counts := s.manager.CountByStatus(stored)
	out := make(map[string]int, len(counts))
	for st, n := range counts {
		out[string(st)] = n
	}
	return out, nil
}
