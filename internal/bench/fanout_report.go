package bench

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// writeFanoutReport writes goal 4's table (each figure's median, min and
// max over the rounds) and whether it is met, which it returns.
func writeFanoutReport(w io.Writer, rounds []fanoutRound, opts Options) bool {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	subs := float64(opts.FanoutSubscribers)
	p("Goal 4, subscription fan-out: %d rounds, each %.0f texts/s for %s from a network process to one session of the server, "+
		"%d graphql-transport-ws subscribers of its INBOUND_MESSAGE_UPSERT events held by the load program over loopback "+
		"(offered: %.0f deliveries/s).\n\n", len(rounds), opts.FanoutRate, opts.FanoutWindow, opts.FanoutSubscribers, opts.FanoutRate*subs)
	writeFanoutFigures(w, rounds, opts.FanoutSubscribers)

	var cut, gaps, disorder, behind int64
	for _, r := range rounds {
		cut += int64(r.CutOff)
		gaps += r.Gaps
		disorder += r.Disorder
		behind += int64(r.Behind)
	}
	per := fanoutOver(rounds, fanoutRound.PerSecond)
	p("\n| Goal 4 part | target | median | |\n|---|---|---:|---|\n")
	p("| deliveries/s to %d subscribers | ≥ %d | %.0f | %s |\n", opts.FanoutSubscribers, goalDeliveries, per.med, metText(per.med >= goalDeliveries))
	p("| subscribers cut off (all rounds) | 0 | %d | %s |\n", cut, metText(cut == 0))
	p("| texts missing or out of order, and subscribers without the last text %s after the window (all rounds) | 0 | %d | %s |\n",
		fanoutDrain, gaps+disorder+behind, metText(gaps+disorder+behind == 0))
	met := per.med >= goalDeliveries && cut == 0 && gaps+disorder+behind == 0
	p("\nGoal 4: %s.\n", metText(met))
	return met
}

// writeFanoutFigures writes the figures table of some rounds.
func writeFanoutFigures(w io.Writer, rounds []fanoutRound, subscribers int) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	row := func(label, format string, f func(fanoutRound) float64) {
		s := fanoutOver(rounds, f)
		p("| %s | "+format+" | "+format+" | "+format+" |\n", label, s.med, s.lo, s.hi)
	}
	p("| Figure | median | min | max |\n|---|---:|---:|---:|\n")
	row("**deliveries/s** (all subscribers, in the window)", "%.0f", fanoutRound.PerSecond)
	row("texts sent/s", "%.1f", func(r fanoutRound) float64 { return float64(r.Sent) / r.Window.Seconds() })
	row("subscribers cut off", "%.0f", func(r fanoutRound) float64 { return float64(r.CutOff) })
	row("texts missing (gaps)", "%.0f", func(r fanoutRound) float64 { return float64(r.Gaps) })
	row("texts out of order or repeated", "%.0f", func(r fanoutRound) float64 { return float64(r.Disorder) })
	row("subscribers without the last text after the drain", "%.0f", func(r fanoutRound) float64 { return float64(r.Behind) })
	row("latency send → receipt p50 (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.P50) })
	row("latency send → receipt p99 (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.P99) })
	row("server CPU (% of one core; all processes)", "%.0f", func(r fanoutRound) float64 { return cpuPercent(r.ServerCPU, r.Window) })
	if len(rounds) > 0 && len(rounds[0].ServerCPUs) > 1 {
		for i := range rounds[0].ServerCPUs {
			row(fmt.Sprintf("server process %d CPU (%% of one core)", i+1), "%.0f", func(r fanoutRound) float64 {
				if i >= len(r.ServerCPUs) {
					return 0
				}
				return cpuPercent(r.ServerCPUs[i], r.Window)
			})
		}
		row("latency p50, subscribers on the session's holder (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.HolderP50) })
		row("latency p99, subscribers on the session's holder (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.HolderP99) })
		row("latency p50, subscribers on the other process(es), by NOTIFY (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.RemoteP50) })
		row("latency p99, subscribers on the other process(es), by NOTIFY (ms)", "%.1f", func(r fanoutRound) float64 { return ms(r.RemoteP99) })
	}
	row("server CPU per delivery (µs)", "%.2f", func(r fanoutRound) float64 {
		if r.Deliveries == 0 {
			return 0
		}
		return float64(r.ServerCPU.Microseconds()) / float64(r.Deliveries)
	})
	if slices.ContainsFunc(rounds, func(r fanoutRound) bool { return r.DBCPU > 0 }) {
		row("PostgreSQL server CPU (% of one core; all its processes)", "%.0f", func(r fanoutRound) float64 { return cpuPercent(r.DBCPU, r.Window) })
	}
	row("server RSS (MiB; all processes)", "%.0f", func(r fanoutRound) float64 { return float64(r.ServerRSS) / (1 << 20) })
	row("network CPU (% of one core)", "%.0f", func(r fanoutRound) float64 { return cpuPercent(r.NetworkCPU, r.Window) })
	row("load program CPU (% of one core; its websocket clients)", "%.0f", func(r fanoutRound) float64 { return cpuPercent(r.SelfCPU, r.Window) })
	p("\nLoad average at each window's end: ")
	for i, r := range rounds {
		if i > 0 {
			p("; ")
		}
		p("%s", r.Load)
	}
	p(".\n")
}

// writeFanoutSteps writes the step-up: one row per rate, up to the first
// that did not keep up.
func writeFanoutSteps(w io.Writer, steps []fanoutRound, opts Options) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	subs := opts.FanoutSubscribers
	p("\nStep-up (one %s window per rate, %d subscribers, until a rate is not kept up: a subscriber cut off, "+
		"a text missing or late, or under 90%% of the offered deliveries inside the window):\n\n", opts.FanoutStepWindow, subs)
	p("| texts/s | offered deliveries/s | deliveries/s | cut off | missing / disorder / behind | p50 (ms) | p99 (ms) | server CPU | load program CPU | load average |\n")
	p("|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n")
	best := -1.0
	for _, r := range steps {
		p("| %.0f | %.0f | %.0f | %d | %d / %d / %d | %.1f | %.1f | %.0f%% | %.0f%% | %s |\n", r.Rate, r.Rate*float64(subs), r.PerSecond(),
			r.CutOff, r.Gaps, r.Disorder, r.Behind, float64(r.P50)/1e6, float64(r.P99)/1e6,
			cpuPercent(r.ServerCPU, r.Window), cpuPercent(r.SelfCPU, r.Window), r.Load)
		if r.keptUp(subs) {
			best = max(best, r.PerSecond())
		}
	}
	if best < 0 {
		p("\nNo rate of the step-up was kept up.\n")
		return
	}
	p("\nHighest rate kept up with none cut off: %.0f deliveries/s.\n", best)
}

func fanoutOver(rounds []fanoutRound, f func(fanoutRound) float64) spread {
	xs := make([]float64, len(rounds))
	for i, r := range rounds {
		xs[i] = f(r)
	}
	return spreadOf(xs)
}

func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
