package cluster

import (
	"container/heap"
	"errors"
	"sync"
	"time"
)

// nonceLen is the size of a call's nonce: 128 random bits, so two honest
// calls never share one.
const nonceLen = 16

// maxSeen bounds the nonces a process remembers. A nonce is kept until its
// call's timestamp leaves the skew window (at most 2×callSkew), so the cap
// allows about maxSeen/(2×callSkew) ≈ 540 calls a second to one process,
// sustained, which is far above what its WhatsApp sessions can do; it costs
// a few MiB at most.
const maxSeen = 1 << 16

// errReplay: the nonce was taken by an earlier call within its window.
var errReplay = errors.New("cluster: a call with this nonce was taken already (a replay)")

// errSeenFull: the cache is at its cap with nothing expired.
var errSeenFull = errors.New("cluster: too many calls within the signature window")

// seenCache remembers the nonces of the calls taken during their
// signature window, so a recorded call cannot be played again while its
// timestamp is still accepted. After the window the timestamp check
// refuses it, so its nonce can be forgotten: memory is bounded by the
// calls of one window, and by maxSeen.
//
// Past the cap it refuses new calls rather than forgetting live nonces:
// evicting one would let its call be replayed, and only holders of this
// process's key can add nonces at all (they are added after the signature
// is checked), so a full cache means overload by the cluster itself, which
// the caller sees as a temporary refusal. Expired entries are pruned on
// each insert, oldest first (a heap by expiry), so no goroutine is needed.
type seenCache struct {
	mu     sync.Mutex
	max    int
	byID   map[[nonceLen]byte]struct{}
	expiry expiryHeap // the same nonces, by when each may be forgotten
}

func newSeenCache(max int) *seenCache {
	return &seenCache{max: max, byID: make(map[[nonceLen]byte]struct{})}
}

// seen reports whether nonce was taken already (and is still remembered).
// It lets a replay be refused before its body is read.
func (c *seenCache) seen(nonce [nonceLen]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byID[nonce]
	return ok
}

// take records nonce until expires, or refuses it: errReplay when it was
// taken already, errSeenFull at the cap. now prunes what has expired.
func (c *seenCache) take(nonce [nonceLen]byte, expires, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.expiry) > 0 && c.expiry[0].at.Before(now) {
		e := heap.Pop(&c.expiry).(seenEntry)
		delete(c.byID, e.nonce)
	}
	if _, ok := c.byID[nonce]; ok {
		return errReplay
	}
	if len(c.byID) >= c.max {
		return errSeenFull
	}
	c.byID[nonce] = struct{}{}
	heap.Push(&c.expiry, seenEntry{nonce: nonce, at: expires})
	return nil
}

// len is how many nonces are remembered.
func (c *seenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}

type seenEntry struct {
	nonce [nonceLen]byte
	at    time.Time
}

// expiryHeap orders the remembered nonces by when they may be forgotten.
type expiryHeap []seenEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(seenEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
