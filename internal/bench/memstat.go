package bench

// The memory figures of goal 5: a process's resident set from
// /proc/<pid>/status, a figure of wagraph's /metrics, and the rule that
// says a server has settled.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memory is what /proc/<pid>/status says of a process's memory, in bytes.
type memory struct {
	RSS     int64 // VmRSS: every resident page, the binary's shared ones too
	RSSAnon int64 // RssAnon: the resident private pages (heap, stacks)
	Threads int64
}

func processMemory(pid int) (memory, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memory{}, fmt.Errorf("memory of %d: %w", pid, err)
	}
	return parseStatusMemory(string(b))
}

// parseStatusMemory reads VmRSS, RssAnon (both "<n> kB") and Threads of
// a /proc/<pid>/status text. VmRSS is required; RssAnon (Linux 4.5 on)
// and Threads are 0 when absent.
func parseStatusMemory(status string) (memory, error) {
	var m memory
	seen := false
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		kb := true
		switch key {
		case "VmRSS":
			dst, seen = &m.RSS, true
		case "RssAnon":
			dst = &m.RSSAnon
		case "Threads":
			dst, kb = &m.Threads, false
		default:
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 || kb && (len(f) != 2 || f[1] != "kB") {
			return memory{}, fmt.Errorf("status: %s: %q: want <n> kB", key, val)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("status: %s: %w", key, err)
		}
		if kb {
			n *= 1024
		}
		*dst = n
	}
	if err := sc.Err(); err != nil {
		return memory{}, err
	}
	if !seen {
		return memory{}, errors.New("status: no VmRSS (a zombie?)")
	}
	return m, nil
}

// metricValue sums the samples of the metric name in a Prometheus text
// exposition whose labels include every one of labels (name="value"
// pairs); found is false when there is none.
func metricValue(text, name string, labels ...string) (v float64, found bool, err error) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		var set string
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return 0, false, fmt.Errorf("metrics: %q: no closing brace", line)
			}
			set, rest = rest[1:end], rest[end+1:]
		}
		if !hasLabels(set, labels) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false, fmt.Errorf("metrics: %q: no value", line)
		}
		x, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false, fmt.Errorf("metrics: %q: %w", line, err)
		}
		v += x
		found = true
	}
	return v, found, nil
}

// hasLabels reports whether the label set (`a="x",b="y"`, as the Go
// client writes it: no escaped quote or comma in wagraph's values) holds
// every one of want.
func hasLabels(set string, want []string) bool {
	have := strings.Split(set, ",")
	for _, w := range want {
		found := false
		for _, h := range have {
			if strings.TrimSpace(h) == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// settleRule says when a process is idle: its last Window samples of RSS
// (taken a fixed interval apart) lie within Tolerance of their largest,
// and the CPU it used over them is at most MaxCPU of one core.
type settleRule struct {
	Window    int
	Tolerance float64 // a fraction of the largest sample
	MaxCPU    float64 // a fraction of one core
}

// settleSample is one reading of a process: its RSS and its CPU share
// (of one core) since the reading before.
type settleSample struct {
	RSS int64
	CPU float64
}

// settled reports whether the samples, oldest first, end in a settled
// window.
func (r settleRule) settled(samples []settleSample) bool {
	if r.Window < 1 || len(samples) < r.Window {
		return false
	}
	last := samples[len(samples)-r.Window:]
	lo, hi := last[0].RSS, last[0].RSS
	cpu := 0.0
	for i, s := range last {
		lo, hi = min(lo, s.RSS), max(hi, s.RSS)
		if i > 0 { // the first sample's CPU was spent before the window
			cpu += s.CPU
		}
	}
	if r.Window > 1 {
		cpu /= float64(r.Window - 1)
	}
	return float64(hi-lo) <= r.Tolerance*float64(hi) && cpu <= r.MaxCPU
}
