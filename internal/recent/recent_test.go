package recent

import (
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const ttl = 5 * time.Second
	tests := []struct {
		name string
		act  func(c *Cache[string, int])
		at   time.Time
		want bool
	}{
		{"fresh", func(c *Cache[string, int]) { c.Put("a", 1, c.Generation(), t0) }, t0.Add(ttl), true},
		{"expired", func(c *Cache[string, int]) { c.Put("a", 1, c.Generation(), t0) }, t0.Add(ttl + time.Nanosecond), false},
		{"forgotten", func(c *Cache[string, int]) {
			c.Put("a", 1, c.Generation(), t0)
			c.Forget("a")
		}, t0, false},
		{"dropped by match", func(c *Cache[string, int]) {
			c.Put("a", 1, c.Generation(), t0)
			c.Drop(func(_ string, v int) bool { return v == 1 })
		}, t0, false},
		{"not matched", func(c *Cache[string, int]) {
			c.Put("a", 1, c.Generation(), t0)
			c.Drop(func(_ string, v int) bool { return v == 2 })
		}, t0, true},
		{"read before a drop, put after it", func(c *Cache[string, int]) {
			gen := c.Generation()
			c.Forget("other")
			c.Put("a", 1, gen, t0)
		}, t0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New[string, int](ttl, 10)
			tt.act(c)
			if _, ok := c.Get("a", tt.at); ok != tt.want {
				t.Errorf("Get = %v, want %v", ok, tt.want)
			}
		})
	}
}

func TestCacheBound(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c := New[int, int](time.Second, 3)
	for i := range 3 {
		c.Put(i, i, c.Generation(), t0)
	}
	c.Put(3, 3, c.Generation(), t0)
	if _, ok := c.Get(3, t0); ok {
		t.Error("a full cache of fresh entries took another")
	}
	if _, ok := c.Get(0, t0); !ok {
		t.Error("an entry in use was evicted")
	}
	later := t0.Add(2 * time.Second)
	c.Put(3, 3, c.Generation(), later)
	if v, ok := c.Get(3, later); !ok || v != 3 {
		t.Errorf("after the others expired: Get = %d, %v; want 3, true", v, ok)
	}
}
