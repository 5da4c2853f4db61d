package cluster

import (
	"errors"
	"testing"
	"time"
)

func nonceOf(i int) (n [nonceLen]byte) {
	n[0], n[1], n[2] = byte(i), byte(i>>8), byte(i>>16)
	return n
}

// TestSeenCache: a nonce is taken once within its window; the cache holds
// at most its cap (refusing, not growing, past it) and forgets a nonce
// once its window has passed, on the next insert, which makes room again.
func TestSeenCache(t *testing.T) {
	const max = 100
	c := newSeenCache(max)
	t0 := time.Unix(1_800_000_000, 0)
	exp := t0.Add(callSkew)

	if err := c.take(nonceOf(0), exp, t0); err != nil {
		t.Fatalf("first take: %v", err)
	}
	if !c.seen(nonceOf(0)) {
		t.Error("a nonce taken is not seen")
	}
	if err := c.take(nonceOf(0), exp, t0.Add(callSkew)); !errors.Is(err, errReplay) {
		t.Errorf("the same nonce at the end of its window: %v, want errReplay", err)
	}
	for i := 1; i < max; i++ {
		if err := c.take(nonceOf(i), exp.Add(time.Duration(i)*time.Millisecond), t0); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
	}
	if err := c.take(nonceOf(max), exp, t0); !errors.Is(err, errSeenFull) {
		t.Errorf("past the cap: %v, want errSeenFull", err)
	}
	if c.len() != max {
		t.Errorf("%d remembered, want the cap %d", c.len(), max)
	}
	// Past the first window's end: only the nonces whose window ended go,
	// oldest first.
	later := exp.Add(50*time.Millisecond + time.Microsecond)
	if err := c.take(nonceOf(max), later.Add(callSkew), later); err != nil {
		t.Fatalf("take once some have expired: %v", err)
	}
	if got, want := c.len(), max-51+1; got != want {
		t.Errorf("%d remembered after the prune, want %d", got, want)
	}
	if c.seen(nonceOf(0)) || c.seen(nonceOf(50)) || !c.seen(nonceOf(51)) {
		t.Error("the prune did not forget exactly the expired nonces")
	}
	// A nonce forgotten is not a replay any more: the timestamp check
	// refuses its call instead (TestCallHandler, "timestamp too old").
	if err := c.take(nonceOf(0), later.Add(callSkew), later); err != nil {
		t.Errorf("a forgotten nonce: %v", err)
	}
	// Much later, everything has gone.
	end := later.Add(3 * callSkew)
	if err := c.take(nonceOf(max+1), end.Add(callSkew), end); err != nil || c.len() != 1 {
		t.Errorf("after every window: %v, %d remembered; want 1", err, c.len())
	}
}
