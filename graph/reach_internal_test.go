package graph

import (
	"strconv"
	"testing"
	"time"
)

// TestSessionOwnersInvalidation covers the owner cache's rules: a hit while
// fresh, a miss once expired, a drop forgets at once, and a read that began
// before a drop is not cached after it.
func TestSessionOwnersInvalidation(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	tests := []struct {
		name   string
		act    func(c *sessionOwners)
		at     time.Time
		wantOK bool
	}{
		{"fresh", func(c *sessionOwners) { c.put("s1", "u1", c.generation(), t0) }, t0.Add(sessionOwnerTTL), true},
		{"expired", func(c *sessionOwners) { c.put("s1", "u1", c.generation(), t0) }, t0.Add(sessionOwnerTTL + time.Nanosecond), false},
		{"dropped", func(c *sessionOwners) {
			c.put("s1", "u1", c.generation(), t0)
			c.drop("s1")
		}, t0, false},
		{"read before a drop, put after it", func(c *sessionOwners) {
			gen := c.generation()
			c.drop("s1")
			c.put("s1", "u1", gen, t0)
		}, t0, false},
		{"another session dropped", func(c *sessionOwners) {
			c.put("s1", "u1", c.generation(), t0)
			c.drop("s2")
		}, t0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c sessionOwners
			tc.act(&c)
			owner, ok := c.get("s1", tc.at)
			if ok != tc.wantOK || (ok && owner != "u1") {
				t.Fatalf("get = %q, %v; want ok=%v", owner, ok, tc.wantOK)
			}
		})
	}
}

// TestSessionOwnersBound checks that the cache stops growing at its bound
// and makes room again once entries expire.
func TestSessionOwnersBound(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	var c sessionOwners
	for i := range sessionOwnerMax {
		c.put(strconv.Itoa(i), "u", 0, t0)
	}
	c.put("extra", "u", 0, t0)
	if _, ok := c.get("extra", t0); ok {
		t.Fatal("an entry past the bound was cached")
	}
	later := t0.Add(sessionOwnerTTL + time.Second)
	c.put("extra", "u", 0, later)
	if _, ok := c.get("extra", later); !ok {
		t.Fatal("no room made once the entries expired")
	}
}
