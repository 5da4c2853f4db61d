package bench

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// round is one measurement of every target.
type round struct {
	by map[string]measurement
}

// Goal 1 of issue 11.
const (
	goalREST    = 0.50
	goalGraphQL = 0.35
	goalP99     = 20 * time.Millisecond
)

// spread is the median, min and max of one figure over the rounds.
type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return spread{}
	}
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[n-1]}
}

func (r round) ratio(name string) float64 {
	bare := r.by["bare"].PerSecond()
	if bare == 0 {
		return 0
	}
	return r.by[name].PerSecond() / bare
}

// writeReport writes one Markdown table: each figure's median, min and max
// over the rounds, and whether goal 1 is met.
func writeReport(w io.Writer, rounds []round, opts Options) error {
	over := func(f func(round) float64) spread {
		xs := make([]float64, len(rounds))
		for i, r := range rounds {
			xs[i] = f(r)
		}
		return spreadOf(xs)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Goal 1, API overhead: %d rounds, each bare, REST and GraphQL for %s after a %s warm-up, %d keep-alive connections (closed loop).\n\n",
		len(rounds), opts.Duration, opts.Warmup, opts.Conns)
	p("| Figure | median | min | max |\n|---|---:|---:|---:|\n")
	row3 := func(label, format string, s spread) {
		p("| %s | "+format+" | "+format+" | "+format+" |\n", label, s.med, s.lo, s.hi)
	}
	errs := 0
	for _, name := range []string{"bare", "REST", "GraphQL"} {
		row3(name+" requests/s", "%.0f", over(func(r round) float64 { return r.by[name].PerSecond() }))
		row3(name+" p50 (ms)", "%.2f", over(func(r round) float64 { return ms(r.by[name].P50) }))
		row3(name+" p99 (ms)", "%.2f", over(func(r round) float64 { return ms(r.by[name].P99) }))
		row3(name+" server CPU per request (µs)", "%.1f", over(func(r round) float64 { return us(r.by[name].CPUPerRequest()) }))
		for _, r := range rounds {
			errs += r.by[name].Errors
		}
	}
	rest := over(func(r round) float64 { return r.ratio("REST") })
	gql := over(func(r round) float64 { return r.ratio("GraphQL") })
	row3("**REST / bare** (requests/s)", "%.1f%%", spread{rest.med * 100, rest.lo * 100, rest.hi * 100})
	row3("**GraphQL / bare** (requests/s)", "%.1f%%", spread{gql.med * 100, gql.lo * 100, gql.hi * 100})
	p("\nWrong answers or failed requests in the measured windows: %d.\n\n", errs)

	restP99 := over(func(r round) float64 { return ms(r.by["REST"].P99) })
	gqlP99 := over(func(r round) float64 { return ms(r.by["GraphQL"].P99) })
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	p("| Goal 1 part | target | median | |\n|---|---|---:|---|\n")
	p("| REST / bare | ≥ %.0f%% | %.1f%% | %s |\n", goalREST*100, rest.med*100, met(rest.med >= goalREST))
	p("| GraphQL / bare | ≥ %.0f%% | %.1f%% | %s |\n", goalGraphQL*100, gql.med*100, met(gql.med >= goalGraphQL))
	p("| REST p99 | < %s | %.2f ms | %s |\n", goalP99, restP99.med, met(restP99.med < ms(goalP99)))
	p("| GraphQL p99 | < %s | %.2f ms | %s |\n", goalP99, gqlP99.med, met(gqlP99.med < ms(goalP99)))
	all := rest.med >= goalREST && gql.med >= goalGraphQL && restP99.med < ms(goalP99) && gqlP99.med < ms(goalP99) && errs == 0
	p("\nGoal 1: %s", met(all))
	if errs > 0 {
		p(" (some answers were wrong)")
	}
	p(".\n")
	return nil
}
