package bench

import (
	"os"
	"testing"
)

func TestParseStatusMemory(t *testing.T) {
	const full = "Name:\twagraph\nState:\tS (sleeping)\nVmPeak:\t 1900000 kB\nVmRSS:\t   51234 kB\nRssAnon:\t   40000 kB\nRssFile:\t   11234 kB\nThreads:\t12\n"
	tests := []struct {
		name    string
		status  string
		want    memory
		wantErr bool
	}{
		{"every field", full, memory{RSS: 51234 << 10, RSSAnon: 40000 << 10, Threads: 12}, false},
		{"no RssAnon (before Linux 4.5)", "VmRSS:\t 8 kB\nThreads:\t1\n", memory{RSS: 8 << 10, Threads: 1}, false},
		{"no VmRSS (a zombie)", "Name:\tx\nState:\tZ (zombie)\nThreads:\t1\n", memory{}, true},
		{"another unit", "VmRSS:\t 8 MB\n", memory{}, true},
		{"not a number", "VmRSS:\t eight kB\n", memory{}, true},
		{"a name holding VmRSS is not the field", "Name:\tVmRSS: 9 kB\nVmRSS:\t 1 kB\n", memory{RSS: 1 << 10}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatusMemory(tt.status)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestProcessMemory reads this process's own status: a test binary has a
// resident set and threads.
func TestProcessMemory(t *testing.T) {
	m, err := processMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS < 1<<20 || m.RSSAnon <= 0 || m.RSSAnon > m.RSS || m.Threads < 1 {
		t.Errorf("implausible: %+v", m)
	}
}

func TestMetricValue(t *testing.T) {
	const text = `# HELP wagraph_sessions Sessions by status.
# TYPE wagraph_sessions gauge
wagraph_sessions{status="CONNECTED"} 998
wagraph_sessions{status="CONNECTING"} 2
wagraph_sessions_total 5
go_goroutines 4021
go_memstats_heap_inuse_bytes 1.2345e+08
wagraph_sends_total{kind="text",outcome="ok"} 3
wagraph_sends_total{kind="image",outcome="ok"} 4
wagraph_sends_total{kind="text",outcome="failed"} 1
`
	tests := []struct {
		name      string
		metric    string
		labels    []string
		want      float64
		wantFound bool
	}{
		{"one labelled sample", "wagraph_sessions", []string{`status="CONNECTED"`}, 998, true},
		{"every sample summed, not a longer name", "wagraph_sessions", nil, 1000, true},
		{"no labels", "go_goroutines", nil, 4021, true},
		{"exponent", "go_memstats_heap_inuse_bytes", nil, 1.2345e8, true},
		{"one label of several", "wagraph_sends_total", []string{`outcome="ok"`}, 7, true},
		{"two labels", "wagraph_sends_total", []string{`outcome="ok"`, `kind="text"`}, 3, true},
		{"no such label value", "wagraph_sessions", []string{`status="PAIRING"`}, 0, false},
		{"no such metric", "go_threads", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := metricValue(text, tt.metric, tt.labels...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || found != tt.wantFound {
				t.Errorf("got %v found %v, want %v found %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
	if _, _, err := metricValue("go_goroutines many\n", "go_goroutines"); err == nil {
		t.Error("a value that is not a number: no error")
	}
}

func TestSettled(t *testing.T) {
	rule := settleRule{Window: 3, Tolerance: 0.01, MaxCPU: 0.05}
	s := func(rss int64, cpu float64) settleSample { return settleSample{RSS: rss, CPU: cpu} }
	tests := []struct {
		name    string
		samples []settleSample
		want    bool
	}{
		{"too few samples", []settleSample{s(100, 0), s(100, 0)}, false},
		{"flat and idle", []settleSample{s(1000, 0.9), s(1000, 0), s(1000, 0.01)}, true},
		{"within 1%", []settleSample{s(995, 0), s(1000, 0), s(999, 0)}, true},
		{"growing past 1%", []settleSample{s(980, 0), s(1000, 0), s(1000, 0)}, false},
		{"flat but busy", []settleSample{s(1000, 0), s(1000, 0.2), s(1000, 0)}, false},
		{"the first sample's CPU is before the window", []settleSample{s(1000, 0.9), s(1000, 0.04), s(1000, 0.04)}, true},
		{"only the last window counts", []settleSample{s(100, 1), s(500, 1), s(1000, 0), s(1000, 0), s(1005, 0)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rule.settled(tt.samples); got != tt.want {
				t.Errorf("settled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCountLogLevels(t *testing.T) {
	log := `time=2026-11-24T01:00:00Z level=INFO msg="network listening"
time=2026-11-24T01:00:01Z level=WARN msg="slow client"
time=2026-11-24T01:00:02Z level=ERROR msg="write failed"
{"time":"2026-11-24T01:00:03Z","level":"ERROR","msg":"restoring the session failed"}
{"time":"2026-11-24T01:00:04Z","level":"WARN","msg":"x"}
{"time":"2026-11-24T01:00:05Z","level":"INFO","msg":"level=ERROR in the message of an INFO line"}
`
	got := countLogLevels(log)
	if want := (logLevels{warn: 2, error: 2}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestSessionPhone(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range []int{1, 2, 999, 1000, 9_999_999} {
		p := sessionPhone(i)
		if len(p) != 12 || seen[p] {
			t.Errorf("sessionPhone(%d) = %q: want 12 digits, distinct", i, p)
		}
		seen[p] = true
	}
}
