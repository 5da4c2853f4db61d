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
// They are built first, before what they observe (the event log, the
// dispatcher and the sessions report to them), so the sources are read
// through the App.
func newMetrics(db *ent.Client, a *App, log *slog.Logger) *metrics.Metrics {
	kinds := []string{string(events.WebhookTest)}
	for _, k := range events.Selectable() {
		kinds = append(kinds, string(k))
	}
	return metrics.New(metrics.Options{
		Sessions:         sessionCounts{db: db, app: a},
		Version:          versionInUse{a},
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
	db  *ent.Client
	app *App // its manager, built after the metrics
}

// versionInUse is the version the sessions announce, once the keeper of
// the version is built.
type versionInUse struct{ app *App }

func (v versionInUse) String() string {
	if v.app.versions == nil {
		return ""
	}
	return v.app.versions.String()
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
	counts := s.app.manager.CountByStatus(stored)
	out := make(map[string]int, len(counts))
	for st, n := range counts {
		out[string(st)] = n
	}
	return out, nil
}
