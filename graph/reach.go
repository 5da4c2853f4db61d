package graph

import (
	"context"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/whatsapp"
)

// Sessions is the home of the session records (sessions.Service): who
// reaches which session (the owner cached), the sessions a caller reaches
// (one read, each record with the status its holder saved), creating a
// session and deleting one. graph reads no session from the database but
// through it.
type Sessions interface {
	Reach(ctx context.Context, p *auth.Principal, id string) error
	Get(ctx context.Context, p *auth.Principal, id string) (*ent.Session, error)
	List(ctx context.Context, p *auth.Principal) ([]*ent.Session, error)
	Exists(ctx context.Context, id string) (bool, error)
	ConnectedAt(ctx context.Context, id string) (at time.Time, ok bool, err error)
	Create(ctx context.Context, p *auth.Principal, name string) (*ent.Session, string, error)
	Delete(ctx context.Context, s *ent.Session) error
	Forget(id string)
	Limits(ctx context.Context, id string) (whatsapp.Limits, error)
}

// reachSessionID is reachSession for callers that need only to know the
// caller reaches the session, not its record: the session's owner comes
// from the service's cache when it is there.
func (r *Resolver) reachSessionID(ctx context.Context, id string) (*auth.Principal, error) {
	p, err := auth.Require(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Sessions.Reach(ctx, p, id); err != nil {
		return nil, err
	}
	return p, nil
}

// SessionDeleted forgets a session another process deleted a moment ago
// (its revocation notice): its owner is no longer cached here and its
// subscriptions end.
func (r *Resolver) SessionDeleted(id string) { r.Sessions.Forget(id) }
