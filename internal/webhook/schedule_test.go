package webhook_test

import (
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/webhook"
)

// defaultSchedule is --webhook-retry's default.
var defaultSchedule = []time.Duration{
	0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

func fixed(v float64) func() float64 { return func() float64 { return v } }

func TestNextAttemptDefaultSchedule(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, delay := range defaultSchedule {
		attempt := i + 1
		tests := []struct {
			name   string
			jitter func() float64
			want   time.Duration
		}{
			{"middle: no move", fixed(0.5), delay},
			{"lowest: 10% early", fixed(0), delay - delay/10},
			{"below range: clamped", fixed(-3), delay - delay/10},
			{"above range: clamped", fixed(7), delay + delay/10},
			{"quarter: 5% early", fixed(0.25), delay - delay/20},
			{"three quarters: 5% late", fixed(0.75), delay + delay/20},
		}
		for _, tt := range tests {
			at, ok := webhook.NextAttempt(defaultSchedule, attempt, now, tt.jitter)
			if !ok {
				t.Fatalf("attempt %d: no time, want one", attempt)
			}
			if got := at.Sub(now); got != tt.want {
				t.Errorf("attempt %d (%s), %s: delay %s, want %s", attempt, delay, tt.name, got, tt.want)
			}
		}
	}
}

// TestNextAttemptJitterBounds: with the real random source, every delay lies
// within ±10% of the schedule, never before now, and retries that failed at
// the same moment spread out instead of coming back together.
func TestNextAttemptJitterBounds(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, delay := range defaultSchedule {
		attempt := i + 1
		lo, hi := delay-delay/10, delay+delay/10
		seen := map[time.Duration]bool{}
		for range 500 {
			at, ok := webhook.NextAttempt(defaultSchedule, attempt, now, nil)
			if !ok {
				t.Fatalf("attempt %d: no time", attempt)
			}
			got := at.Sub(now)
			if got < lo || got > hi || got < 0 {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", attempt, got, lo, hi)
			}
			seen[got] = true
		}
		switch {
		case delay == 0 && len(seen) != 1:
			t.Errorf("attempt %d: a zero delay moved: %v", attempt, seen)
		case delay > 0 && len(seen) < 400:
			t.Errorf("attempt %d: 500 draws gave only %d distinct delays", attempt, len(seen))
		}
	}
}

func TestNextAttemptOutOfSchedule(t *testing.T) {
	now := time.Unix(1700000000, 0)
	tests := []struct {
		name     string
		schedule []time.Duration
		attempt  int
	}{
		{"after the last", defaultSchedule, len(defaultSchedule) + 1},
		{"far after the last", defaultSchedule, 100},
		{"attempt zero", defaultSchedule, 0},
		{"negative attempt", defaultSchedule, -1},
		{"empty schedule", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if at, ok := webhook.NextAttempt(tt.schedule, tt.attempt, now, fixed(0.5)); ok {
				t.Fatalf("NextAttempt = %s, true; want false", at)
			}
		})
	}
	// The last attempt itself is still scheduled.
	if _, ok := webhook.NextAttempt(defaultSchedule, len(defaultSchedule), now, fixed(0.5)); !ok {
		t.Fatal("the last attempt has no time")
	}
}

// TestNextAttemptCountsFromNow: the delay is counted from the time given (the
// previous attempt's end), whatever it is.
func TestNextAttemptCountsFromNow(t *testing.T) {
	schedule := []time.Duration{time.Second, time.Minute}
	for _, now := range []time.Time{time.Unix(0, 0), time.Date(2031, 1, 2, 3, 4, 5, 6, time.UTC)} {
		at, ok := webhook.NextAttempt(schedule, 2, now, fixed(0.5))
		if !ok || !at.Equal(now.Add(time.Minute)) {
			t.Errorf("from %s: %s, %v; want %s", now, at, ok, now.Add(time.Minute))
		}
	}
}
