package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSendCasesOf(t *testing.T) {
	got := sendCasesOf([]int{1, 50})
	want := []sendCase{{1, "text"}, {1, "image"}, {50, "text"}, {50, "image"}}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestSenderOf: every worker's sends go round all the sessions' clients
// in turn, and at any step the workers use distinct sessions while there
// are enough of them.
func TestSenderOf(t *testing.T) {
	for _, c := range []struct{ workers, sessions int }{{16, 1}, {16, 50}, {16, 4}, {3, 7}} {
		used := map[int]bool{}
		for i := range c.sessions {
			step := map[int]bool{}
			for w := range c.workers {
				s := senderOf(w, i, c.workers, c.sessions)
				if s < 0 || s >= c.sessions {
					t.Fatalf("%+v: worker %d send %d from session %d", c, w, i, s)
				}
				used[s] = true
				step[s] = true
			}
			if want := min(c.workers, c.sessions); len(step) != want {
				t.Errorf("%+v: step %d uses %d sessions, want %d", c, i, len(step), want)
			}
		}
		if len(used) != c.sessions {
			t.Errorf("%+v: %d sessions send, want all %d", c, len(used), c.sessions)
		}
	}
}

// rounds of a made-up run: raw sends rawRate msg/s, wagraph the given
// share of it, with the CPU and latencies given.
func fakeRounds(c sendCase, shares []float64, errs int) []sendRound {
	var out []sendRound
	for i, share := range shares {
		raw := sendMeasurement{Messages: 1000, Window: time.Second, P50: 10 * time.Millisecond, P99: 40 * time.Millisecond,
			NetCPU: 250 * time.Millisecond, SelfCPU: 700 * time.Millisecond}
		wag := sendMeasurement{Messages: int(1000 * share), Window: time.Second, P50: 20 * time.Millisecond, P99: 90 * time.Millisecond,
			ServerCPU: time.Duration(1000*share) * 1600 * time.Microsecond, NetCPU: time.Duration(1000*share) * 300 * time.Microsecond}
		if i == 0 && errs > 0 {
			wag.Errors, wag.FirstErr = errs, "HTTP 500 boom"
		}
		out = append(out, sendRound{c: {sideRaw: raw, sideWagraph: wag}})
	}
	return out
}

func TestSendFiguresOf(t *testing.T) {
	c := sendCase{Sessions: 1, Kind: "text"}
	figs := sendFiguresOf(fakeRounds(c, []float64{0.5, 0.8, 0.6, 0.9, 0.7}, 0), []sendCase{c})
	if len(figs) != 1 {
		t.Fatalf("%d cases", len(figs))
	}
	f := figs[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(f.Ratio.med, 0.7) || !near(f.Ratio.lo, 0.5) || !near(f.Ratio.hi, 0.9) {
		t.Errorf("ratio %+v, want median 0.7 in 0.5-0.9", f.Ratio)
	}
	if s := f.PerSecond[sideWagraph]; s.med != 700 || s.lo != 500 || s.hi != 900 {
		t.Errorf("wagraph messages/s %+v", s)
	}
	if s := f.ServerCPU[sideWagraph]; !near(s.med, 1600) {
		t.Errorf("wagraph server CPU/message %+v, want 1600 µs", s)
	}
	if s := f.SelfCPU[sideRaw]; !near(s.med, 700) {
		t.Errorf("raw load program CPU/message %+v, want 700 µs", s)
	}
	if s := f.P99[sideWagraph]; s.med != 90 {
		t.Errorf("wagraph p99 %+v ms", s)
	}
	if !f.met() || f.Errors != 0 {
		t.Errorf("median 70%% without errors: met %v, %d errors", f.met(), f.Errors)
	}
}

// TestSendsReportVerdicts: a case meets goal 2 only with its median ratio
// at 70% and no failed send; a raw side that sent nothing gives a ratio of
// 0, never a division by zero.
func TestSendsReportVerdicts(t *testing.T) {
	text, image := sendCase{1, "text"}, sendCase{1, "image"}
	for _, c := range []struct {
		name   string
		shares []float64
		errs   int
		want   []string
	}{
		{"met", []float64{0.7, 0.75, 0.72}, 0, []string{"| ≥ 70% | 72.0% | met |", "Goal 2: met."}},
		{"below", []float64{0.69, 0.6, 0.8}, 0, []string{"| 69.0% | NOT met |", "Goal 2: NOT met."}},
		{"errors", []float64{0.9, 0.9, 0.9}, 3, []string{"NOT met (3 failed sends; first: wagraph: HTTP 500 boom)", "Goal 2: NOT met."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rounds := fakeRounds(text, c.shares, c.errs)
			// The image case is met in every run: the verdict is the
			// text case's.
			for i, r := range fakeRounds(image, []float64{0.9, 0.9, 0.9}, 0) {
				rounds[i][image] = r[image]
			}
			var buf bytes.Buffer
			if err := writeSendsReport(&buf, rounds, []sendCase{text, image}, sendSetup{workers: 16, warmup: time.Second, duration: time.Second, servers: 1}); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
	rounds := []sendRound{{text: {sideRaw: {Window: time.Second}, sideWagraph: {Messages: 10, Window: time.Second}}}}
	if f := sendFiguresOf(rounds, []sendCase{text}); f[0].Ratio.med != 0 || f[0].met() {
		t.Errorf("raw sent nothing: ratio %+v, met %v; want 0, not met", f[0].Ratio, f[0].met())
	}
}

// TestMeasureSends: only sends that end inside the window count, failures
// are counted apart with the first one kept, and the CPU is read at the
// window's two ends.
func TestMeasureSends(t *testing.T) {
	var reads int
	cpu := func() (time.Duration, error) { reads++; return time.Duration(reads) * time.Second, nil }
	// Two servers: the first's reading is the shared counter's, the
	// second's always twice the first's.
	servers := func() ([]time.Duration, error) {
		c, err := cpu()
		return []time.Duration{c, 2 * c}, err
	}
	cpus := sendCPUs{servers: servers, network: cpu, self: cpu}
	m, err := measureSends(context.Background(), 2, 20*time.Millisecond, 100*time.Millisecond, cpus, func(ctx context.Context, w, i int) (bool, error) {
		time.Sleep(time.Millisecond)
		if w == 1 && i%2 == 1 {
			return true, errors.New("refused")
		}
		return w == 0 && i%2 == 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Messages == 0 || m.Errors == 0 || m.FirstErr != "refused" || m.Messages < m.Errors {
		t.Errorf("%d messages, %d errors (%q); want both, the messages more", m.Messages, m.Errors, m.FirstErr)
	}
	if m.Window != 100*time.Millisecond || m.ServerCPU != 9*time.Second || m.NetCPU != 3*time.Second || m.SelfCPU != 3*time.Second {
		t.Errorf("window %s, CPU %s/%s/%s; want 100ms, 9 s (3 + 6) and 3 s each (reads 1-3, then 4-6)", m.Window, m.ServerCPU, m.NetCPU, m.SelfCPU)
	}
	if len(m.ServerCPUs) != 2 || m.ServerCPUs[0] != 3*time.Second || m.ServerCPUs[1] != 6*time.Second {
		t.Errorf("CPU per server %v; want [3s 6s]", m.ServerCPUs)
	}
	// Worker 0's even sends were forwarded, its odd ones not, worker 1's
	// successes never: about a third of the messages (failures not counted).
	if m.Forwarded == 0 || m.Forwarded >= m.Messages/2+2 {
		t.Errorf("%d of %d messages forwarded; want about a third", m.Forwarded, m.Messages)
	}
	if m.P50 <= 0 || m.P99 < m.P50 {
		t.Errorf("p50 %s, p99 %s", m.P50, m.P99)
	}
}
