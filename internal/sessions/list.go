package sessions

import (
	"context"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/whatsapp"
)

// List returns the record of every session p reaches, oldest first, in one
// read: each with the status its holder saved (Stored), so that a list of
// sessions needs nothing more of the database or of the processes running
// them.
func (s *Service) List(ctx context.Context, p *auth.Principal) ([]*ent.Session, error) {
	q := s.db.Session.Query().Order(entsession.ByCreatedAt(), entsession.ByID())
	switch {
	case p.IsSessionToken():
		q.Where(entsession.ID(p.SessionID))
	case !p.Admin:
		q.Where(entsession.OwnerID(p.UserID))
	}
	ss, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return ss, nil
}

// Exists reports whether session id still exists (a subscription set up
// while it was being deleted ends with NOT_FOUND).
func (s *Service) Exists(ctx context.Context, id string) (bool, error) {
	ok, err := s.db.Session.Query().Where(entsession.ID(id)).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("check session %s: %w", id, err)
	}
	return ok, nil
}

// ConnectedAt is when session id last became CONNECTED, as its record says
// (the manager saves it before it publishes the change); ok is false when
// the record has none or is gone.
func (s *Service) ConnectedAt(ctx context.Context, id string) (at time.Time, ok bool, err error) {
	rec, found, err := NewStatusStore(s.db).LoadStatus(ctx, id)
	if err != nil || !found || rec.ConnectedAt.IsZero() {
		return time.Time{}, false, err
	}
	return rec.ConnectedAt.UTC(), true, nil
}

// Stored is each of recs with its status record, as the session manager
// (or a cluster's router) turns them into states (States).
func Stored(recs []*ent.Session) []whatsapp.StoredSession {
	out := make([]whatsapp.StoredSession, len(recs))
	for i, r := range recs {
		out[i] = whatsapp.StoredSession{ID: r.ID, Record: statusRecord(r)}
	}
	return out
}
