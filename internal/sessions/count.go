package sessions

import (
	"context"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/whatsapp"
)

// Counter answers the status of sessions from the ones stored: the session
// manager (whatsapp.Manager.CountByStatus).
type Counter interface {
	CountByStatus(stored map[string]whatsapp.Status) map[whatsapp.Status]int
}

// StatusCounts counts every session of the table by the status the
// manager answers for it: the sessions gauge of /metrics.
type StatusCounts struct {
	db      *ent.Client
	manager Counter
}

// NewStatusCounts returns the counts of the sessions of db by the status
// manager answers.
func NewStatusCounts(db *ent.Client, manager Counter) StatusCounts {
	return StatusCounts{db: db, manager: manager}
}

// SessionsByStatus counts the sessions by status (metrics.SessionCounter).
func (s StatusCounts) SessionsByStatus(ctx context.Context) (map[string]int, error) {
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
