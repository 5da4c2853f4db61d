package bench

import (
	"fmt"
	"io"
	"time"
)

// memoryRound is one settled state of the server holding the sessions
// (after linking them, or after a restart) with the empty server measured
// next to it.
type memoryRound struct {
	ref, held idleFigures
	stop      time.Duration // SIGTERM to exit of the server before (restarts)
	startup   time.Duration // process start to every session CONNECTED (restarts)
	// The CPU the server and the network used in that time: what the
	// start-up costs whatever else the machine runs.
	startupCPU, startupNetCPU time.Duration
}

// perSession is the RSS one session adds, in MiB: the server's less the
// empty server's, over the sessions.
func (m memoryRound) perSession(n int) float64 {
	return mib(m.held.mem.RSS-m.ref.mem.RSS) / float64(n)
}

// memoryRun is everything goal 5 reports. rounds[0] is after linking,
// the others after each restart.
type memoryRun struct {
	sessions  int
	linkTook  time.Duration
	rounds    []memoryRound
	netMem    memory
	netCPU    time.Duration // the network's CPU over the whole goal
	netLog    logLevels
	serverLog logLevels
	load      string
}

func (r memoryRun) write(w io.Writer, opts Options) {
	n := float64(r.sessions)
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	linked, restarts := r.rounds[0], r.rounds[1:]
	over := func(f func(memoryRound) float64) spread {
		xs := make([]float64, len(restarts))
		for i, m := range restarts {
			xs[i] = f(m)
		}
		return spreadOf(xs)
	}
	settled := 0
	for _, m := range r.rounds {
		if m.held.settled && m.ref.settled {
			settled++
		}
	}
	p("Goal 5, memory: %d sessions linked to the network process (%d at once) in %s, then %d restarts of the server "+
		"(SIGTERM, start on the same data directory). Each figure is taken once the server is idle (%d RSS samples %s apart within %.0f%%, "+
		"≤ %.0f%% of a core between them; %d of %d states settled) next to an empty server of the same flags started just before. "+
		"Load average at the end: %s.\n\n",
		r.sessions, opts.LinkParallel, r.linkTook.Round(time.Second), len(restarts),
		memorySettle.Window, settleInterval, memorySettle.Tolerance*100, memorySettle.MaxCPU*100, settled, len(r.rounds), r.load)
	p("| Figure | after linking | restarts: median | min | max |\n|---|---:|---:|---:|---:|\n")
	row := func(label, format string, f func(memoryRound) float64) {
		s := over(f)
		p("| %s | "+format+" | "+format+" | "+format+" | "+format+" |\n", label, f(linked), s.med, s.lo, s.hi)
	}
	rowRestart := func(label, format string, f func(memoryRound) float64) {
		s := over(f)
		p("| %s | – | "+format+" | "+format+" | "+format+" |\n", label, s.med, s.lo, s.hi)
	}
	row("server RSS (MiB)", "%.1f", func(m memoryRound) float64 { return mib(m.held.mem.RSS) })
	row("empty server RSS (MiB)", "%.1f", func(m memoryRound) float64 { return mib(m.ref.mem.RSS) })
	row("**RSS per session over the empty server (MiB)**", "%.3f", func(m memoryRound) float64 { return m.perSession(r.sessions) })
	row("server RSS / sessions (MiB)", "%.3f", func(m memoryRound) float64 { return mib(m.held.mem.RSS) / n })
	row("RssAnon per session over the empty server (MiB)", "%.3f", func(m memoryRound) float64 { return mib(m.held.mem.RSSAnon-m.ref.mem.RSSAnon) / n })
	row("Go heap in use per session over the empty server (KiB)", "%.1f", func(m memoryRound) float64 { return (m.held.heapInuse - m.ref.heapInuse) / 1024 / n })
	row("Go memory from the OS per session over the empty server (KiB)", "%.1f", func(m memoryRound) float64 { return (m.held.sys - m.ref.sys) / 1024 / n })
	row("goroutines per session over the empty server", "%.1f", func(m memoryRound) float64 { return (m.held.goroutines - m.ref.goroutines) / n })
	row("server threads", "%.0f", func(m memoryRound) float64 { return float64(m.held.mem.Threads) })
	rowRestart("**start-up to all CONNECTED (s)**", "%.2f", func(m memoryRound) float64 { return m.startup.Seconds() })
	rowRestart("server CPU during start-up (s)", "%.2f", func(m memoryRound) float64 { return m.startupCPU.Seconds() })
	rowRestart("network CPU during start-up (s)", "%.2f", func(m memoryRound) float64 { return m.startupNetCPU.Seconds() })
	rowRestart("stop, SIGTERM to exit (s)", "%.2f", func(m memoryRound) float64 { return m.stop.Seconds() })
	p("\nThe network process at the end: RSS %.1f MiB (%.3f MiB per session), %d threads; CPU %s over the whole goal; "+
		"its log: %d errors, %d warnings. The server's logs: %d errors, %d warnings.\n\n",
		mib(r.netMem.RSS), mib(r.netMem.RSS)/n, r.netMem.Threads, r.netCPU.Round(time.Millisecond),
		r.netLog.error, r.netLog.warn, r.serverLog.error, r.serverLog.warn)

	perLinked := linked.perSession(r.sessions)
	perRestart := over(func(m memoryRound) float64 { return m.perSession(r.sessions) })
	startup := over(func(m memoryRound) float64 { return m.startup.Seconds() })
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	memOK := perLinked <= goalSessionRSS && perRestart.med <= goalSessionRSS
	startOK := startup.med <= goalStartup.Seconds()
	netOK := r.netLog.error == 0
	p("| Goal 5 part | target | figure | |\n|---|---|---:|---|\n")
	p("| RSS per idle session after linking | ≤ %.2f MiB | %.3f MiB | %s |\n", goalSessionRSS, perLinked, met(perLinked <= goalSessionRSS))
	p("| RSS per idle session after a restart (median) | ≤ %.2f MiB | %.3f MiB | %s |\n", goalSessionRSS, perRestart.med, met(perRestart.med <= goalSessionRSS))
	p("| start-up to all %d CONNECTED (median) | ≤ %s | %.2f s | %s |\n", r.sessions, goalStartup, startup.med, met(startOK))
	p("| the network process holds them (every start all CONNECTED, no error in its log) | – | %d errors | %s |\n", r.netLog.error, met(netOK))
	p("\nGoal 5: %s.\n", met(memOK && startOK && netOK))
	if r.sessions != goalSessions {
		p("(The goal is set at %d sessions; with %d the fixed costs weigh more per session and start-up is shorter.)\n", goalSessions, r.sessions)
	}
}
