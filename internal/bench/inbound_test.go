package bench

import (
	"strings"
	"testing"
	"time"
)

func TestTrackerLatencyLossAndDuplicates(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	tr := newTracker("inabc", t0, t0.Add(time.Second))
	b0, p0 := tr.batch(t0, 3)
	b1, p1 := tr.batch(t0.Add(500*time.Millisecond), 2)
	if b0 != 0 || b1 != 1 || p0 != "inabc.0." || p1 != "inabc.1." {
		t.Fatalf("batches %d %q, %d %q; want 0 inabc.0., 1 inabc.1.", b0, p0, b1, p1)
	}
	tr.queued(b0, 3)
	tr.queued(b1, 2)
	if got := tr.outstanding(); got != 5 {
		t.Fatalf("outstanding before any arrival = %d, want 5", got)
	}
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	tr.arrived(p0+"1", ms(10))     // 10 ms
	tr.arrived(p0+"2", ms(30))     // 30 ms
	tr.arrived(p0+"2", ms(40))     // a duplicate
	tr.arrived(p1+"1", ms(1600))   // 1100 ms, after the window
	tr.arrived("inxyz.0.1", ms(5)) // another window's text
	tr.arrived(p1+"9", ms(5))      // not a number of its batch
	tr.arrived("inabc.7.1", ms(5)) // no such batch
	tr.arrived("hello", ms(5))

	got := tr.tally()
	want := inboundTally{Sent: 5, Unique: 3, Lost: 2, Dups: 1, Foreign: 4, InWindow: 2, Window: time.Second,
		P50: 30 * time.Millisecond, P99: 1100 * time.Millisecond, Max: 1100 * time.Millisecond, LastAfter: 600 * time.Millisecond}
	if got != want {
		t.Errorf("tally\n got %+v\nwant %+v", got, want)
	}
	if d := got.Delivered(); d != 2 {
		t.Errorf("delivered = %v/s, want 2 (two first arrivals in a one-second window)", d)
	}
	if n := tr.outstanding(); n != 2 {
		t.Errorf("outstanding = %d, want 2", n)
	}
}

func TestTrackerFailedSends(t *testing.T) {
	t0 := time.Now()
	tr := newTracker("in1", t0, t0.Add(time.Second))
	tests := []struct {
		count, queued int
	}{
		{5, 5},
		{5, 2},  // cut short
		{4, 0},  // refused
		{3, -1}, // nonsense from a failed call counts as nothing queued
		{2, 9},  // never more than asked
	}
	for _, tc := range tests {
		i, _ := tr.batch(t0, tc.count)
		tr.queued(i, tc.queued)
	}
	got := tr.tally()
	if got.Sent != 5+2+0+0+2 || got.Failed != 3+4+3 || got.Lost != got.Sent {
		t.Errorf("sent %d failed %d lost %d; want 9, 10, 9", got.Sent, got.Failed, got.Lost)
	}
}

func TestTrackerParse(t *testing.T) {
	tr := newTracker("inab", time.Time{}, time.Time{})
	tests := []struct {
		text     string
		batch, n int
		ok       bool
	}{
		{"inab.0.1", 0, 1, true},
		{"inab.12.345", 12, 345, true},
		{"inab.-1.1", 0, 0, false},
		{"inab.1", 0, 0, false},
		{"inab.x.1", 0, 0, false},
		{"inabc.1.1", 0, 0, false},
		{"in.1.1", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tc := range tests {
		b, n, ok := tr.parse(tc.text)
		if b != tc.batch || n != tc.n || ok != tc.ok {
			t.Errorf("parse(%q) = %d, %d, %v; want %d, %d, %v", tc.text, b, n, ok, tc.batch, tc.n, tc.ok)
		}
	}
}

func TestGrowthOf(t *testing.T) {
	minutes := func(n float64) time.Duration { return time.Duration(n * float64(time.Minute)) }
	var flat, leak []soakSample
	for i := range 31 { // every minute, 0 to 30
		at := time.Duration(i) * time.Minute
		flat = append(flat, soakSample{At: at, RSS: 100 << 20, Goroutines: 500 + i%3*10})
		leak = append(leak, soakSample{At: at, RSS: int64(100+i) << 20, Goroutines: 500 + 5*i})
	}
	tests := []struct {
		name      string
		samples   []soakSample
		value     func(soakSample) float64
		mark, end float64
		max       float64
		rate      float64
	}{
		{"flat RSS", flat, func(s soakSample) float64 { return float64(s.RSS >> 20) }, 100, 100, 100, 0},
		// medians over [5, 6) and (29, 30]: one reading each here
		{"leaking RSS", leak, func(s soakSample) float64 { return float64(s.RSS >> 20) }, 105, 130, 130, 130.0/105 - 1},
		{"noisy goroutines", flat, func(s soakSample) float64 { return float64(s.Goroutines) }, 520, 500, 520, 500.0/520 - 1},
		{"leaking goroutines", leak, func(s soakSample) float64 { return float64(s.Goroutines) }, 525, 650, 650, 650.0/525 - 1},
	}
	for _, tc := range tests {
		g, err := growthOf(tc.samples, minutes(5), time.Minute, tc.value)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g.Mark != tc.mark || g.End != tc.end || g.Max != tc.max || g.Samples != 26 {
			t.Errorf("%s: %+v; want mark %v end %v max %v over 26 samples", tc.name, g, tc.mark, tc.end, tc.max)
		}
		if d := g.Rate() - tc.rate; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: rate %v, want %v", tc.name, g.Rate(), tc.rate)
		}
	}
	// The medians resist one outlier in each span.
	var spiky []soakSample
	for i := range 60 { // every 10 s for 10 minutes
		g := 1000
		if i == 31 || i == 59 {
			g = 5000
		}
		spiky = append(spiky, soakSample{At: time.Duration(i) * 10 * time.Second, Goroutines: g})
	}
	g, err := growthOf(spiky, minutes(5), time.Minute, func(s soakSample) float64 { return float64(s.Goroutines) })
	if err != nil {
		t.Fatal(err)
	}
	if g.Rate() != 0 || g.MaxRate() != 4 {
		t.Errorf("spiky: rate %v max rate %v; want 0 and 4", g.Rate(), g.MaxRate())
	}
	if _, err := growthOf(flat, minutes(31), time.Minute, func(s soakSample) float64 { return 1 }); err == nil {
		t.Error("a mark after the last reading: no error")
	}
}

func TestSoakSpan(t *testing.T) {
	if got := soakSpan(30*time.Minute, 5*time.Minute); got != time.Minute {
		t.Errorf("30m soak: span %s, want 1m", got)
	}
	if got := soakSpan(5*time.Minute, 2*time.Minute); got != time.Minute {
		t.Errorf("5m soak marked at 2m: span %s, want 1m", got)
	}
	if got := soakSpan(5*time.Minute, 4*time.Minute); got != 20*time.Second {
		t.Errorf("5m soak marked at 4m: span %s, want 20s", got)
	}
}

func TestParseGoroutines(t *testing.T) {
	metrics := "# HELP go_goroutines Number of goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 1234\ngo_threads 9\n"
	if got, err := parseGoroutines(strings.NewReader(metrics)); err != nil || got != 1234 {
		t.Errorf("parseGoroutines = %d, %v; want 1234", got, err)
	}
	if _, err := parseGoroutines(strings.NewReader("go_threads 9\n")); err == nil {
		t.Error("parseGoroutines without the gauge: no error")
	}
}

func TestDefaultGoalsLeaveTheSoakOut(t *testing.T) {
	for _, g := range DefaultGoals() {
		if g == "soak" {
			t.Fatal("the soak is among the default goals")
		}
	}
	if !strings.Contains(strings.Join(GoalNames(), ","), "soak") {
		t.Error("the soak is not a goal")
	}
}
