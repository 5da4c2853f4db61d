package webhook

import (
	"math"
	"math/rand/v2"
	"time"
)

// JitterFraction is how far a retry may move from its scheduled delay, either
// way: deliveries that failed together (a receiver down for everyone) then
// come back spread out rather than all in the same second.
const JitterFraction = 0.10

// NextAttempt returns when attempt number attempt (1-based) is due: its
// delay in schedule (the --webhook-retry setting, schedule[0] for the first
// attempt) after now, which is the delivery's creation for the first attempt
// and the end of the previous attempt for later ones. The delay is moved by
// up to ±JitterFraction of itself: jitter returns a number in [0, 1), as
// rand.Float64 does (nil uses it); out-of-range answers are clamped, so the
// delay is never negative and a zero delay stays zero. ok is false when the
// schedule has no such attempt: the delivery has failed.
func NextAttempt(schedule []time.Duration, attempt int, now time.Time, jitter func() float64) (at time.Time, ok bool) {
	if attempt < 1 || attempt > len(schedule) {
		return time.Time{}, false
	}
	delay := schedule[attempt-1]
	if delay <= 0 {
		return now, true
	}
	if jitter == nil {
		jitter = rand.Float64
	}
	j := min(max(jitter(), 0), 1)
	factor := 1 + JitterFraction*(2*j-1)
	// Rounded, not truncated: 10h × 0.9 in floating point is a hair short.
	return now.Add(time.Duration(math.Round(float64(delay) * factor))), true
}
