package sessions

import (
	"context"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/whatsapp"
)

// LoadLimits reads what WhatsApp said of a session's limits
// (whatsapp.LimitStore); a session that does not exist has none.
func (s StatusStore) LoadLimits(ctx context.Context, id string) (whatsapp.Limits, error) {
	row, err := s.db.Session.Query().Where(entsession.ID(id)).Select(entsession.FieldReachoutTimelockUntil).Only(ctx)
	if ent.IsNotFound(err) {
		return whatsapp.Limits{}, nil
	}
	if err != nil {
		return whatsapp.Limits{}, fmt.Errorf("load limits of session %s: %w", id, err)
	}
	var l whatsapp.Limits
	if row.ReachoutTimelockUntil != nil {
		l.ReachoutTimelockUntil = row.ReachoutTimelockUntil.UTC()
	}
	return l, nil
}

// SaveLimits writes what WhatsApp said of a session's limits.
func (s StatusStore) SaveLimits(ctx context.Context, id string, l whatsapp.Limits) error {
	u := s.db.Session.Update().Where(entsession.ID(id))
	if l.ReachoutTimelockUntil.IsZero() {
		u.ClearReachoutTimelockUntil()
	} else {
		u.SetReachoutTimelockUntil(l.ReachoutTimelockUntil.UTC())
	}
	if _, err := u.Save(ctx); err != nil {
		return fmt.Errorf("save limits of session %s: %w", id, err)
	}
	return nil
}

// Limits is what WhatsApp said of a session's limits as they stand now
// (an ended timelock is none): a stored read, whatever the session's
// status or the process running it. The caller has reached the session.
func (s *Service) Limits(ctx context.Context, id string) (whatsapp.Limits, error) {
	l, err := StatusStore{db: s.db}.LoadLimits(ctx, id)
	if err != nil {
		return whatsapp.Limits{}, err
	}
	return l.Active(s.now()), nil
}
