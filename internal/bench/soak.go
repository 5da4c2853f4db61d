package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Goal 6 of issue 11: growth allowed after the mark.
const goalSoakGrowth = 0.05

// DefaultGoals are the goals measured when none are named: every goal but
// the soak, which runs apart (make soak) for its length.
func DefaultGoals() []string {
	return slices.DeleteFunc(GoalNames(), func(name string) bool { return name == "soak" })
}

// soakSample is one reading of the server while the soak runs.
type soakSample struct {
	At         time.Duration // since the soak's start
	RSS        int64         // bytes
	Goroutines int
}

// growth is how one figure moved after the mark. Single readings are
// noisy (the goroutines of attempts and requests in flight come and go),
// so the levels compared are medians over a span: the first span after
// the mark against the last span of the soak.
type growth struct {
	Mark, End, Max float64 // levels at the mark and the end; the highest reading after the mark
	Samples        int     // readings after the mark
}

// Rate is the end's level against the mark's, less one (0.03: 3% higher).
func (g growth) Rate() float64 {
	if g.Mark == 0 {
		return 0
	}
	return g.End/g.Mark - 1
}

// MaxRate is the highest reading after the mark against the mark's level,
// less one.
func (g growth) MaxRate() float64 {
	if g.Mark == 0 {
		return 0
	}
	return g.Max/g.Mark - 1
}

// growthOf computes the growth of value over samples taken after mark,
// with levels as medians over span. It fails when there are no readings
// in either span.
func growthOf(samples []soakSample, mark, span time.Duration, value func(soakSample) float64) (growth, error) {
	var after []soakSample
	for _, s := range samples {
		if s.At >= mark {
			after = append(after, s)
		}
	}
	if len(after) == 0 {
		return growth{}, fmt.Errorf("no reading after the mark %s", mark)
	}
	end := after[len(after)-1].At
	var first, last []float64
	g := growth{Samples: len(after)}
	for _, s := range after {
		v := value(s)
		if s.At < mark+span {
			first = append(first, v)
		}
		if s.At > end-span {
			last = append(last, v)
		}
		g.Max = max(g.Max, v)
	}
	g.Mark, g.End = median(first), median(last)
	return g, nil
}

func median(xs []float64) float64 { return spreadOf(xs).med }

// soakSpan is the span of the levels: a minute, or a third of what runs
// after the mark when that is shorter.
func soakSpan(duration, mark time.Duration) time.Duration {
	return min(time.Minute, (duration-mark)/3)
}

// runSoak measures goal 6: the machinery of goal 3 at half its rate over
// its sessions for SoakDuration in one window, the server's RSS and
// goroutines read every SoakSample.
func runSoak(ctx context.Context, e *env, out io.Writer) error {
	if e.SoakMark >= e.SoakDuration || e.SoakSample <= 0 {
		return fmt.Errorf("the soak's mark (%s) must come before its end (%s), and its sample interval be above 0", e.SoakMark, e.SoakDuration)
	}
	cases, err := inboundCasesOf(e.InboundSecrets)
	if err != nil {
		return err
	}
	// One kind of text for the whole soak: with secrets when only those
	// are asked for (-inbound-secrets on).
	c := cases[0]
	rig, err := startInboundRig(ctx, e, false)
	if err != nil {
		return err
	}
	defer rig.stop()
	rate := e.InboundRate / 2
	scrape := newScraper(rig.srv)
	var samples []soakSample
	var sampleErr error
	sctx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(e.SoakSample)
		defer tick.Stop()
		for {
			rss, err := processRSS(rig.srv.cmd.Process.Pid)
			if err == nil {
				var n int
				n, err = scrape.goroutines(sctx)
				if err == nil {
					at := time.Since(start)
					samples = append(samples, soakSample{At: at, RSS: rss, Goroutines: n})
					e.progress("soak %s: RSS %.1f MiB, %d goroutines, load %s", at.Round(time.Second), float64(rss)/(1<<20), n, loadAverage())
				}
			}
			if err != nil && sctx.Err() == nil {
				sampleErr = err
				return
			}
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	w, err := rig.window(ctx, e, rig.sides()[0], c, rate, e.SoakDuration)
	stopSampling()
	wg.Wait()
	if err != nil {
		return err
	}
	if sampleErr != nil {
		return fmt.Errorf("reading the server: %w", sampleErr)
	}
	span := soakSpan(e.SoakDuration, e.SoakMark)
	rss, err := growthOf(samples, e.SoakMark, span, func(s soakSample) float64 { return float64(s.RSS) })
	if err != nil {
		return err
	}
	gor, err := growthOf(samples, e.SoakMark, span, func(s soakSample) float64 { return float64(s.Goroutines) })
	if err != nil {
		return err
	}
	writeSoakReport(out, w, c, rss, gor, span, rate, e.Options)
	return nil
}

func writeSoakReport(out io.Writer, w inboundWindow, c inboundCase, rss, gor growth, span time.Duration, rate int, opts Options) {
	p := func(format string, a ...any) { fmt.Fprintf(out, format, a...) }
	mib := func(b float64) float64 { return b / (1 << 20) }
	p("Goal 6, soak: %d sessions, %d %s/s (half of -inbound-rate) for %s in one window, the server's VmRSS and go_goroutines read every %s; "+
		"growth compares the median over the first %s after the mark (%s) with the median over the last %s.\n\n",
		opts.InboundSessions, rate, c, opts.SoakDuration, opts.SoakSample, span, opts.SoakMark, span)
	p("| Figure | at the mark | at the end | max after the mark | growth (end) | growth (max) |\n|---|---:|---:|---:|---:|---:|\n")
	p("| server RSS (MiB) | %.1f | %.1f | %.1f | %+.1f%% | %+.1f%% |\n", mib(rss.Mark), mib(rss.End), mib(rss.Max), rss.Rate()*100, rss.MaxRate()*100)
	p("| server goroutines | %.0f | %.0f | %.0f | %+.1f%% | %+.1f%% |\n", gor.Mark, gor.End, gor.Max, gor.Rate()*100, gor.MaxRate()*100)
	p("\n%s. Server CPU %.2f cores, network %.2f. Load average at the end: %s.\n\n", w.inboundTally, w.ServerCPU.Seconds()/w.Window.Seconds(),
		w.NetworkCPU.Seconds()/w.Window.Seconds(), w.Load)
	p("| Goal 6 part | target | value | |\n|---|---|---:|---|\n")
	p("| RSS growth after the mark | < %.0f%% | %+.1f%% | %s |\n", goalSoakGrowth*100, rss.Rate()*100, metText(rss.Rate() < goalSoakGrowth))
	p("| goroutine growth after the mark | < %.0f%% | %+.1f%% | %s |\n", goalSoakGrowth*100, gor.Rate()*100, metText(gor.Rate() < goalSoakGrowth))
	p("| lost | 0 | %d | %s |\n", w.Lost+w.Failed, metText(w.Lost == 0 && w.Failed == 0))
	all := rss.Rate() < goalSoakGrowth && gor.Rate() < goalSoakGrowth && w.Lost == 0 && w.Failed == 0
	// A soak shorter, or slower, than the goal's is told as such.
	var unlike []string
	if opts.SoakMark != 5*time.Minute || opts.SoakDuration != 30*time.Minute {
		unlike = append(unlike, fmt.Sprintf("a shortened soak: %s with the mark at %s, not the goal's 30 minutes with the mark at minute 5", opts.SoakDuration, opts.SoakMark))
	}
	if rate != goalInboundRate/2 {
		unlike = append(unlike, fmt.Sprintf("at %d texts/s, not the goal's %.0f", rate, goalInboundRate/2))
	}
	if opts.InboundSessions != 100 {
		unlike = append(unlike, fmt.Sprintf("over %d sessions, not the goal's 100", opts.InboundSessions))
	}
	p("\nGoal 6: %s", metText(all))
	if len(unlike) > 0 {
		p(" (%s; not the goal's measurement)", strings.Join(unlike, "; "))
	}
	p(".\n")
}

// scraper reads the server's go_goroutines from /metrics.
type scraper struct {
	url, token string
	http       *http.Client
}

func newScraper(s *wagraphServer) *scraper {
	return &scraper{url: s.base + "/metrics", token: s.token, http: &http.Client{Timeout: 10 * time.Second}}
}

func (s *scraper) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("/metrics: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/metrics: HTTP %d", res.StatusCode)
	}
	return parseGoroutines(res.Body)
}

// parseGoroutines reads the go_goroutines gauge of a Prometheus text
// exposition.
func parseGoroutines(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "go_goroutines ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return 0, fmt.Errorf("go_goroutines %q: %w", rest, err)
		}
		return int(v), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/metrics has no go_goroutines")
}
