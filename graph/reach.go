package graph

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
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

// sessionOwners remembers the owner of recently reached sessions, so that
// the check "may this caller see session X" does not read the session's row
// on every request (it was a fifth of a small REST request's cost). A
// session's owner never changes (owner_id is immutable); only its deletion
// ends an entry. The zero value is ready to use.
type sessionOwners struct {
	mu      sync.Mutex
	entries map[string]cachedOwner
	// gen counts deletions: a check that read the database before one does
	// not cache what it read, which may be the deleted session.
	gen uint64
}

type cachedOwner struct {
	owner string
	until time.Time
}

func (c *sessionOwners) get(id string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok {
		return "", false
	}
	if now.After(e.until) {
		delete(c.entries, id)
		return "", false
	}
	return e.owner, true
}

// generation is read before a database read; put caches its answer only if
// no deletion came in between.
func (c *sessionOwners) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *sessionOwners) put(id, owner string, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil {
		c.entries = map[string]cachedOwner{}
	}
	if len(c.entries) >= sessionOwnerMax {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= sessionOwnerMax {
			return
		}
	}
	c.entries[id] = cachedOwner{owner: owner, until: now.Add(sessionOwnerTTL)}
}

// drop forgets a deleted session and makes reads in flight forget theirs.
func (c *sessionOwners) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, id)
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
	owner, ok := r.owners.get(id, now)
	if !ok {
		gen := r.owners.generation()
		s, err := r.DB.Session.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, SessionNotFound(id)
		}
		if err != nil {
			return nil, fmt.Errorf("get session %s: %w", id, err)
		}
		owner = s.OwnerID
		r.owners.put(id, owner, gen, now)
	}
	if !p.Reaches(id, owner) {
		return nil, SessionNotFound(id)
	}
	return p, nil
}
