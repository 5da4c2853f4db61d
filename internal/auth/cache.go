package auth

import (
	"sync"
	"time"
)

// Bounds of the token cache.
const (
	// tokenCacheTTL is how long a token's check is reused. Revocation in
	// this process is immediate (Disconnect drops the entry); the TTL
	// bounds what a process cannot be told (a revocation made by another
	// process on a shared database).
	tokenCacheTTL = 5 * time.Second
	// tokenCacheMax bounds the entries: only valid tokens are cached, so
	// it is reached only by that many tokens in use within one TTL; past
	// it nothing more is cached until entries expire.
	tokenCacheMax = 10_000
)

// tokenCache keeps the principals of recently checked tokens, by hash, so
// that a request does not query the database for its token each time (the
// lookup was about a tenth of a small request's cost).
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]cachedToken
	// gen counts revocations: a check that read the database before one
	// does not cache what it read, which may be the revoked token.
	gen uint64
}

type cachedToken struct {
	p     Principal
	until time.Time
}

// get returns the cached principal of hash, when there is one still fresh.
func (c *tokenCache) get(hash string, now time.Time) (Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok {
		return Principal{}, false
	}
	if now.After(e.until) {
		delete(c.entries, hash)
		return Principal{}, false
	}
	return e.p, true
}

// generation is read before a database check; put caches its answer only
// if no revocation came in between.
func (c *tokenCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *tokenCache) put(hash string, p Principal, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil {
		c.entries = map[string]cachedToken{}
	}
	if len(c.entries) >= tokenCacheMax {
		for h, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, h)
			}
		}
		if len(c.entries) >= tokenCacheMax {
			return
		}
	}
	c.entries[hash] = cachedToken{p: p, until: now.Add(tokenCacheTTL)}
}

// drop forgets the given tokens and makes checks in flight forget theirs.
func (c *tokenCache) drop(tokenIDs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, e := range c.entries {
		for _, id := range tokenIDs {
			if e.p.TokenID == id {
				delete(c.entries, h)
				break
			}
		}
	}
}
