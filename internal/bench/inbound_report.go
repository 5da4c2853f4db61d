package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeInboundReport writes goal 3's tables, a section per case: each
// side's figures as median, min and max over the rounds, wagraph's
// delivered rate against raw's received rate in the same round, and
// whether the goals are met.
func writeInboundReport(w io.Writer, rounds []inboundRound, cases []inboundCase, withRaw bool, opts Options) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Goal 3, inbound events: %d sessions linked to a network process, each with a webhook (inbound-message.upsert) to a receiver in the load program; "+
		"%d rounds on the same server, each a window per case and side, each window offering %d texts/s (open loop, %d texts per control request, sessions in turn) for %s, "+
		"then draining up to %s. Latency is the receiver's arrival less the time the batch was due at the network.\n\n",
		opts.InboundSessions, len(rounds), opts.InboundRate, opts.InboundBurst, opts.InboundDuration, opts.InboundDrain)
	if withRaw {
		p("The raw reference (issue 35, goal 2): %d raw whatsmeow clients in the load program, each linked to an account of its own on the same network "+
			"and written to by the same contacts, receiving with the sessions' receive settings (synchronous acks, the decrypted-event buffer) and "+
			"whatsmeow's SQLite store opened as the server opens its own (whatsapp.OpenStore; on SQLite whatever -postgres says); a text counts when "+
			"whatsmeow hands it to the handler, before its ack. In each round the two sides take turns, the order swapped every round.\n\n", opts.InboundSessions)
	}
	if len(rounds) < opts.Rounds || !complete(rounds, cases, withRaw) {
		p("Only %d of the %d rounds ran, the last one perhaps in part: a window did not drain within %s, and its backlog would have carried into the next.\n\n",
			len(rounds), opts.Rounds, opts.InboundDrain)
	}
	all := len(rounds) == opts.Rounds && complete(rounds, cases, withRaw)
	allRaw := all
	for _, c := range cases {
		met, rawMet := writeInboundCase(w, rounds, c, withRaw)
		all = all && met
		allRaw = allRaw && rawMet
	}
	p("Goal 3: %s.\n", metText(all))
	if withRaw {
		p("Wagraph against raw whatsmeow (issue 35, goal 2): %s.\n", metText(allRaw))
	}
}

// complete says whether every round has every case on every side.
func complete(rounds []inboundRound, cases []inboundCase, withRaw bool) bool {
	for _, r := range rounds {
		for _, c := range cases {
			if _, ok := r[c][sideWagraph]; !ok {
				return false
			}
			if _, ok := r[c][sideRaw]; withRaw && !ok {
				return false
			}
		}
	}
	return true
}

// writeInboundCase writes one case's section and reports whether goal 3 is
// met in it, and the ratio to raw (false without the reference).
func writeInboundCase(w io.Writer, rounds []inboundRound, c inboundCase, withRaw bool) (met, rawMet bool) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	windows := func(side string) []inboundWindow {
		var out []inboundWindow
		for _, r := range rounds {
			if x, ok := r[c][side]; ok {
				out = append(out, x)
			}
		}
		return out
	}
	over := func(ws []inboundWindow, f func(inboundWindow) float64) spread {
		xs := make([]float64, len(ws))
		for i, x := range ws {
			xs[i] = f(x)
		}
		return spreadOf(xs)
	}
	row3 := func(label, format string, s spread) {
		p("| %s | "+format+" | "+format+" | "+format+" |\n", label, s.med, s.lo, s.hi)
	}
	wg, raw := windows(sideWagraph), windows(sideRaw)
	p("**%s**\n\n| Figure | median | min | max |\n|---|---:|---:|---:|\n", upperFirst(c.String()))
	offered := over(wg, func(x inboundWindow) float64 { return float64(x.Sent) / x.Window.Seconds() })
	delivered := over(wg, func(x inboundWindow) float64 { return x.Delivered() })
	p99 := over(wg, func(x inboundWindow) float64 { return ms(x.P99) })
	row3("offered texts/s", "%.0f", offered)
	row3("delivered texts/s (first arrivals in the window)", "%.0f", delivered)
	row3("p50 send → receiver (ms)", "%.1f", over(wg, func(x inboundWindow) float64 { return ms(x.P50) }))
	row3("p99 send → receiver (ms)", "%.1f", p99)
	row3("max send → receiver (ms)", "%.1f", over(wg, func(x inboundWindow) float64 { return ms(x.Max) }))
	row3("last arrival after the window (ms)", "%.0f", over(wg, func(x inboundWindow) float64 { return ms(x.LastAfter) }))
	row3("server CPU (cores)", "%.2f", over(wg, func(x inboundWindow) float64 { return x.ServerCPU.Seconds() / x.Window.Seconds() }))
	row3("server CPU per text (µs)", "%.0f", over(wg, func(x inboundWindow) float64 {
		return float64(x.ServerCPU.Microseconds()) / float64(max(x.Unique, 1))
	}))
	row3("network CPU (cores)", "%.2f", over(wg, func(x inboundWindow) float64 { return x.NetworkCPU.Seconds() / x.Window.Seconds() }))
	row3("server RSS after the window (MiB)", "%.0f", over(wg, func(x inboundWindow) float64 { return float64(x.ServerRSS) / (1 << 20) }))
	var ratio, received spread
	if withRaw {
		received = over(raw, func(x inboundWindow) float64 { return x.Delivered() })
		row3("raw whatsmeow: received texts/s (first arrivals in the window)", "%.0f", received)
		row3("raw whatsmeow: p99 send → handler (ms)", "%.1f", over(raw, func(x inboundWindow) float64 { return ms(x.P99) }))
		row3("raw whatsmeow: load program CPU per text (µs; the clients and the sender)", "%.0f", over(raw, func(x inboundWindow) float64 {
			return float64(x.SelfCPU.Microseconds()) / float64(max(x.Unique, 1))
		}))
		row3("raw whatsmeow: network CPU (cores)", "%.2f", over(raw, func(x inboundWindow) float64 { return x.NetworkCPU.Seconds() / x.Window.Seconds() }))
		var rs []float64
		for _, r := range rounds {
			a, okA := r[c][sideWagraph]
			b, okB := r[c][sideRaw]
			if okA && okB && b.Delivered() > 0 {
				rs = append(rs, a.Delivered()/b.Delivered())
			}
		}
		ratio = spreadOf(rs)
		row3("wagraph delivered / raw received (same round, %)", "%.0f", spread{ratio.med * 100, ratio.lo * 100, ratio.hi * 100})
	}
	tot := func(ws []inboundWindow) (lost, dups, failed, foreign int, loads []string) {
		for _, x := range ws {
			lost += x.Lost
			dups += x.Dups
			failed += x.Failed
			foreign += x.Foreign
			loads = append(loads, x.Load)
		}
		return
	}
	lost, dups, failed, foreign, loads := tot(wg)
	p("\nwagraph, over all windows: lost %d, duplicates %d, texts the network refused %d, foreign arrivals %d. Load average at each window's end: %s.\n",
		lost, dups, failed, foreign, strings.Join(loads, "; "))
	if withRaw {
		rl, rd, rf, rfo, rloads := tot(raw)
		p("Raw whatsmeow, over all windows: lost %d, duplicates %d, texts the network refused %d, foreign arrivals %d. Load average at each window's end: %s.\n",
			rl, rd, rf, rfo, strings.Join(rloads, "; "))
		if received.med >= 0.95*offered.med {
			p("Raw whatsmeow kept up with the offered rate: the ratio is then bounded by the offer, not raw's capacity; offer more (-inbound-rate) to compare what each side can carry.\n")
		}
	}
	p("\n| Goal part (%s) | target | median | |\n|---|---|---:|---|\n", c)
	p("| delivered | ≥ %.0f/s | %.0f/s | %s |\n", goalInboundRate, delivered.med, metText(delivered.med >= goalInboundRate))
	p("| p99 send → receiver | < %s | %.1f ms | %s |\n", goalInboundP99, p99.med, metText(p99.med < ms(goalInboundP99)))
	p("| lost (all windows) | 0 | %d | %s |\n", lost, metText(lost == 0 && failed == 0))
	met = len(wg) > 0 && delivered.med >= goalInboundRate && p99.med < ms(goalInboundP99) && lost == 0 && failed == 0
	if withRaw {
		rawMet = len(raw) > 0 && ratio.med >= goalInboundRaw
		p("| wagraph delivered / raw received (issue 35, goal 2) | ≥ %.0f%% | %.0f%% | %s |\n", goalInboundRaw*100, ratio.med*100, metText(rawMet))
	}
	p("\n")
	return met, rawMet
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
