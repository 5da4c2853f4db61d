package bench

import (
	"fmt"
	"io"
	"time"
)

// sendFigures is one case's figures over the rounds.
type sendFigures struct {
	Case  sendCase
	Ratio spread // wagraph / raw messages per second, round by round
	// By side (sideRaw, sideWagraph): messages/s, p50 and p99 (ms), and
	// CPU per message (µs) of the server, the network and this process.
	PerSecond, P50, P99, ServerCPU, NetCPU, SelfCPU, DBCPU map[string]spread
	Errors                                                 int
	FirstErr                                               string
	// With several servers, on the wagraph side: the share of sends
	// forwarded to the holder (%), and each process's CPU per message (µs).
	Forwarded  spread
	ProcessCPU []spread
}

// sendSetup is how goal 2 was run, for its report.
type sendSetup struct {
	workers          int
	warmup, duration time.Duration
	servers          int  // wagraph processes (a cluster when above 1)
	postgresCPU      bool // PostgreSQL's processes' CPU was measured
}

// sendFiguresOf reduces the rounds to each case's figures. A round whose
// raw side sent nothing has no ratio (it counts as 0: a failure, never a
// success).
func sendFiguresOf(rounds []sendRound, cases []sendCase) []sendFigures {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var out []sendFigures
	for _, c := range cases {
		f := sendFigures{Case: c, PerSecond: map[string]spread{}, P50: map[string]spread{}, P99: map[string]spread{},
			ServerCPU: map[string]spread{}, NetCPU: map[string]spread{}, SelfCPU: map[string]spread{}, DBCPU: map[string]spread{}}
		over := func(side string, fig func(sendMeasurement) float64) spread {
			xs := make([]float64, len(rounds))
			for i, r := range rounds {
				xs[i] = fig(r[c][side])
			}
			return spreadOf(xs)
		}
		for _, side := range []string{sideRaw, sideWagraph} {
			f.PerSecond[side] = over(side, sendMeasurement.perSecond)
			f.P50[side] = over(side, func(m sendMeasurement) float64 { return ms(m.P50) })
			f.P99[side] = over(side, func(m sendMeasurement) float64 { return ms(m.P99) })
			f.ServerCPU[side] = over(side, func(m sendMeasurement) float64 { return us(m.perMessage(m.ServerCPU)) })
			f.NetCPU[side] = over(side, func(m sendMeasurement) float64 { return us(m.perMessage(m.NetCPU)) })
			f.SelfCPU[side] = over(side, func(m sendMeasurement) float64 { return us(m.perMessage(m.SelfCPU)) })
			f.DBCPU[side] = over(side, func(m sendMeasurement) float64 { return us(m.perMessage(m.DBCPU)) })
			for _, r := range rounds {
				m := r[c][side]
				if m.Errors > 0 && f.FirstErr == "" {
					f.FirstErr = side + ": " + m.FirstErr
				}
				f.Errors += m.Errors
			}
		}
		forwarded := make([]float64, len(rounds))
		for i, r := range rounds {
			if m := r[c][sideWagraph]; m.Messages > 0 {
				forwarded[i] = 100 * float64(m.Forwarded) / float64(m.Messages)
			}
		}
		f.Forwarded = spreadOf(forwarded)
		if len(rounds) > 0 && len(rounds[0][c][sideWagraph].ServerCPUs) > 1 {
			for p := range rounds[0][c][sideWagraph].ServerCPUs {
				f.ProcessCPU = append(f.ProcessCPU, over(sideWagraph, func(m sendMeasurement) float64 {
					if p >= len(m.ServerCPUs) {
						return 0
					}
					return us(m.perMessage(m.ServerCPUs[p]))
				}))
			}
		}
		ratios := make([]float64, len(rounds))
		for i, r := range rounds {
			if raw := r[c][sideRaw].perSecond(); raw > 0 {
				ratios[i] = r[c][sideWagraph].perSecond() / raw
			}
		}
		f.Ratio = spreadOf(ratios)
		out = append(out, f)
	}
	return out
}

// met is whether a case meets goal 2: the median ratio at the goal and no
// failed send on either side.
func (f sendFigures) met() bool { return f.Ratio.med >= goalSends && f.Errors == 0 }

// writeSendsReport writes goal 2's section: a table of each case's figures
// (median, min, max over the rounds) and whether each case meets the goal.
func writeSendsReport(w io.Writer, rounds []sendRound, cases []sendCase, set sendSetup) error {
	figs := sendFiguresOf(rounds, cases)
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Goal 2, sends: %d rounds; in each, every case is measured on both sides (raw whatsmeow clients in the load program, then wagraph's REST, or the other way round every other round) for %s after a %s warm-up, %d concurrent senders (closed loop) taking the sessions in turn, writing to %d network contacts.",
		len(rounds), set.duration, set.warmup, set.workers, sendRecipients)
	if set.servers > 1 {
		p(" wagraph is %d processes on one PostgreSQL database, the sessions spread over them; the senders take the processes in turn, so a send that reaches a process other than its session's holder is forwarded to the holder.", set.servers)
	}
	p("\n\n")
	p("| Case | Figure | raw | wagraph |\n|---|---|---|---|\n")
	cell := func(s spread, format string) string {
		return fmt.Sprintf(format+" ("+format+"-"+format+")", s.med, s.lo, s.hi)
	}
	for _, f := range figs {
		row := func(label, format string, by map[string]spread) {
			p("| %s | %s | %s | %s |\n", f.Case, label, cell(by[sideRaw], format), cell(by[sideWagraph], format))
		}
		row("messages/s", "%.0f", f.PerSecond)
		row("p50 (ms)", "%.2f", f.P50)
		row("p99 (ms)", "%.2f", f.P99)
		row("CPU/message, wagraph (µs)", "%.0f", f.ServerCPU)
		for i, pc := range f.ProcessCPU {
			p("| %s | CPU/message, wagraph process %d (µs) | | %s |\n", f.Case, i+1, cell(pc, "%.0f"))
		}
		if set.postgresCPU {
			row("CPU/message, PostgreSQL server (µs)", "%.0f", f.DBCPU)
		}
		if set.servers > 1 {
			p("| %s | sends forwarded to the holder (%%) | | %s |\n", f.Case, cell(f.Forwarded, "%.0f"))
		}
		row("CPU/message, network (µs)", "%.0f", f.NetCPU)
		row("CPU/message, load program (µs)", "%.0f", f.SelfCPU)
		p("| %s | **wagraph / raw** | %s | |\n", f.Case, cell(spread{f.Ratio.med * 100, f.Ratio.lo * 100, f.Ratio.hi * 100}, "%.1f%%"))
		p("| %s | failed sends | %d | |\n", f.Case, f.Errors)
	}
	p("\nMedian (min-max). The raw side's Signal encryption and its device store run in the load program: its CPU/message is the raw clients' whole cost; on the wagraph side it is the HTTP clients'.\n\n")
	p("| Goal 2 part | target | median | |\n|---|---|---:|---|\n")
	all := true
	for _, f := range figs {
		verdict := "met"
		if !f.met() {
			verdict, all = "NOT met", false
		}
		if f.Errors > 0 {
			verdict += fmt.Sprintf(" (%d failed sends; first: %.200s)", f.Errors, f.FirstErr)
		}
		p("| %s, wagraph / raw | ≥ %.0f%% | %.1f%% | %s |\n", f.Case, goalSends*100, f.Ratio.med*100, verdict)
	}
	verdict := "met"
	if !all {
		verdict = "NOT met"
	}
	p("\nGoal 2: %s.\n", verdict)
	return nil
}
