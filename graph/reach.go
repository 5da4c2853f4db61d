package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/recent"
)

// Bounds of the session owner cache.
const (
	// sessionOwnerTTL is how long a session's owner is reused. Deletion in
	// this process is immediate (DeleteSession drops the entry); the TTL
	// bounds what a process cannot be told, as the token cache's does.
	sessionOwnerTTL = 5 * time.Second
	// sessionOwnerMax bounds the entries: past it nothing more is cached
	// until entries expire.
	sessionOwnerMax = 10_000
)

// sessionOwners remembers the owner of recently reached sessions, so
// that the check "may this caller see session X" does not read the
// session's row on every request (it was a fifth of a small REST request's
// cost). A session's owner never changes (owner_id is immutable); only its
// deletion ends an entry (DeleteSession forgets it).
func (r *Resolver) sessionOwners() *recent.Cache[string, string] {
	r.ownersOnce.Do(func() { r.owners = recent.New[string, string](sessionOwnerTTL, sessionOwnerMax) })
	return r.owners
}

// reachSessionID is reachSession for callers that need only to know the
// caller reaches the session, not its record: the session's owner comes
// from the owner cache when it is there.
func (r *Resolver) reachSessionID(ctx context.Context, id string) (*auth.Principal, error) {
	p, err := auth.Require(ctx)
	if err != nil {
		return nil, err
	}
	// The wall clock, not r.Now: the cache's freshness is the process's
	// own business, whatever clock the records are stamped with.
	now := time.Now()
	owner, ok := r.sessionOwners().Get(id, now)
	if !ok {
		gen := r.sessionOwners().Generation()
		s, err := r.DB.Session.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, SessionNotFound(id)
		}
		if err != nil {
			return nil, fmt.Errorf("get session %s: %w", id, err)
		}
		owner = s.OwnerID
		r.sessionOwners().Put(id, owner, gen, now)
	}
	if !p.Reaches(id, owner) {
		return nil, SessionNotFound(id)
	}
	return p, nil
}

// SessionDeleted forgets a session deleted a moment ago, here or by
// another process (its revocation notice): its owner is no longer cached
// and its subscriptions end (its log went with the record).
func (r *Resolver) SessionDeleted(id string) {
	r.sessionOwners().Forget(id)
	if r.Events != nil {
		r.Events.EndSession(id)
	}
}
