package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tracker is the bookkeeping of goals 3 and 6: every text the network is
// asked to send belongs to a batch (one control request) whose send time
// is recorded before the request; the receiver reports each arrival. A
// text's latency is its arrival less its batch's send time; a text that
// arrives a second time is a duplicate, one that never arrives is lost.
//
// Texts are tag.batch.n: tag tells this tracker's texts from any other
// (a text of an earlier window arriving late is foreign, not a
// duplicate), batch indexes the batches, n counts from 1 within the batch
// (the network numbers a burst's texts that way).
type tracker struct {
	tag string
	// from and to bound the measured window: arrivals inside it make the
	// delivered rate.
	from, to time.Time

	mu       sync.Mutex
	batches  []sentBatch
	lats     []time.Duration // of each first arrival
	unique   int
	dups     int
	foreign  int
	inWindow int
	failed   int // texts a control request did not queue
	last     time.Time
}

// sentBatch is one control request: count texts sent at at.
type sentBatch struct {
	at     time.Time
	count  int // asked for
	queued int // the network's answer; count until it answers
	got    []bool
}

func newTracker(tag string, from, to time.Time) *tracker {
	return &tracker{tag: tag, from: from, to: to}
}

// batch registers count texts about to be sent at at and returns the
// prefix the network is to number them after.
func (t *tracker) batch(at time.Time, count int) (index int, prefix string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	index = len(t.batches)
	t.batches = append(t.batches, sentBatch{at: at, count: count, queued: count, got: make([]bool, count)})
	return index, t.tag + "." + strconv.Itoa(index) + "."
}

// queued records the network's answer for a batch: how many of its texts
// it queued (fewer than asked when the request failed).
func (t *tracker) queued(index, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := &t.batches[index]
	n = min(max(n, 0), b.count)
	t.failed += b.count - n
	b.queued = n
}

// arrived records text arriving at at.
func (t *tracker) arrived(text string, at time.Time) {
	b, n, ok := t.parse(text)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ok || b >= len(t.batches) || n < 1 || n > t.batches[b].count {
		t.foreign++
		return
	}
	sb := &t.batches[b]
	if sb.got[n-1] {
		t.dups++
		return
	}
	sb.got[n-1] = true
	t.unique++
	t.lats = append(t.lats, at.Sub(sb.at))
	if !at.Before(t.from) && !at.After(t.to) {
		t.inWindow++
	}
	if at.After(t.last) {
		t.last = at
	}
}

// parse reads tag.batch.n.
func (t *tracker) parse(text string) (batch, n int, ok bool) {
	rest, found := strings.CutPrefix(text, t.tag+".")
	if !found {
		return 0, 0, false
	}
	bs, ns, found := strings.Cut(rest, ".")
	if !found {
		return 0, 0, false
	}
	b, err1 := strconv.Atoi(bs)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || b < 0 {
		return 0, 0, false
	}
	return b, n, true
}

// outstanding is how many queued texts have not arrived yet.
func (t *tracker) outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sentLocked() - t.unique
}

func (t *tracker) sentLocked() int {
	n := 0
	for _, b := range t.batches {
		n += b.queued
	}
	return n
}

// inboundTally is a tracker's figures.
type inboundTally struct {
	Sent      int // texts the network queued
	Failed    int // texts a control request did not queue
	Unique    int // texts received at least once
	Lost      int // sent and never received
	Dups      int // arrivals of a text already received
	Foreign   int // arrivals of texts this tracker did not send
	InWindow  int // first arrivals inside the measured window
	Window    time.Duration
	P50, P99  time.Duration
	Max       time.Duration
	LastAfter time.Duration // the last first arrival, after the window's end
}

// Delivered is the texts received per second of the window.
func (t inboundTally) Delivered() float64 {
	if t.Window <= 0 {
		return 0
	}
	return float64(t.InWindow) / t.Window.Seconds()
}

func (t inboundTally) String() string {
	return fmt.Sprintf("sent %d, delivered %.0f/s, p50 %s p99 %s max %s, lost %d, duplicates %d, failed sends %d, foreign %d",
		t.Sent, t.Delivered(), t.P50.Round(time.Millisecond), t.P99.Round(time.Millisecond),
		t.Max.Round(time.Millisecond), t.Lost, t.Dups, t.Failed, t.Foreign)
}

// tally is the figures so far; lost counts what has not arrived yet, so
// it is read after the drain.
func (t *tracker) tally() inboundTally {
	t.mu.Lock()
	defer t.mu.Unlock()
	lats := slices.Clone(t.lats)
	slices.Sort(lats)
	out := inboundTally{
		Sent: t.sentLocked(), Failed: t.failed, Unique: t.unique, Dups: t.dups, Foreign: t.foreign,
		InWindow: t.inWindow, Window: t.to.Sub(t.from),
		P50: percentile(lats, 0.50), P99: percentile(lats, 0.99),
	}
	if len(lats) > 0 {
		out.Max = lats[len(lats)-1]
	}
	out.Lost = out.Sent - out.Unique
	if t.last.After(t.to) {
		out.LastAfter = t.last.Sub(t.to)
	}
	return out
}
