// Package recent remembers answers read from the database for a few
// seconds: the token check (internal/auth) and the session owner check
// (graph) each read a row per request otherwise. What this process changes
// it forgets at once (Drop), and a read that began before such a change is
// not remembered (the generation rule); the time to live bounds what it
// cannot be told, such as a change made by another process.
package recent

import (
	"sync"
	"time"
)

// Cache is a bounded map whose entries expire. The zero value is not
// ready: use New.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[K]entry[V]
	// gen counts drops: a read of the database that began before one does
	// not cache what it read, which may be what was dropped.
	gen uint64
}

type entry[V any] struct {
	v     V
	until time.Time
}

// New returns a cache whose entries live ttl and that holds at most max:
// past it nothing more is cached until entries expire (an attacker's many
// keys never evict the ones in use).
func New[K comparable, V any](ttl time.Duration, max int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, entries: map[K]entry[V]{}}
}

// Get returns the value of k, when there is one still fresh at now.
func (c *Cache[K, V]) Get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	if now.After(e.until) {
		delete(c.entries, k)
		var zero V
		return zero, false
	}
	return e.v, true
}

// Generation is read before a read of the database; Put caches its answer
// only if no drop came in between.
func (c *Cache[K, V]) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Put remembers v for k from now, unless a drop came after gen was read or
// the cache is full of fresh entries.
func (c *Cache[K, V]) Put(k K, v V, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			return
		}
	}
	c.entries[k] = entry[V]{v: v, until: now.Add(c.ttl)}
}

// Drop forgets every entry for which match holds, and makes reads in flight
// forget theirs.
func (c *Cache[K, V]) Drop(match func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if match(k, e.v) {
			delete(c.entries, k)
		}
	}
}

// Forget is Drop of the one key k.
func (c *Cache[K, V]) Forget(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, k)
}
