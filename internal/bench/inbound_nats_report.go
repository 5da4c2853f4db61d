package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// writeInboundNATSReport writes the comparison of -inbound-nats: each
// figure per side (median, min–max over its windows) and, with both sides,
// the median over the rounds of each round's on / off ratio (the figure a
// shared machine still gives: both windows of a round ran minutes apart).
func writeInboundNATSReport(w io.Writer, sides []*natsSide, stopped string, opts Options) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	both := len(sides) == 2
	if both {
		p("Goal 3 with the NATS JetStream sink off and on (issue 36): two servers of the same binary, each with its own network process "+
			"and %d linked sessions with a webhook (inbound-message.upsert) to the load program's receiver; the second also with "+
			"`--nats-url` to a nats-server with JetStream (file store) the load program started, every stored event published to stream %s. "+
			"%d rounds, each a window of each server (the one that goes first alternates), offering %d texts/s (open loop, %d texts per "+
			"control request) for %s, then draining up to %s; with the sink on, the window also waits until the stream has every event "+
			"stored (wagraph_nats_lag_events 0), and its CPU counts until then.\n\n",
			opts.InboundSessions, natsStream, opts.Rounds, opts.InboundRate, opts.InboundBurst, opts.InboundDuration, opts.InboundDrain)
	} else {
		p("Goal 3 with the NATS JetStream sink on (issue 36): %d linked sessions, each with a webhook (inbound-message.upsert) to the "+
			"load program's receiver; the server with `--nats-url` to a nats-server with JetStream (file store) the load program started. "+
			"%d windows offering %d texts/s (open loop, %d texts per control request) for %s, then draining up to %s and waiting until "+
			"the stream has every event stored.\n\n",
			opts.InboundSessions, opts.Rounds, opts.InboundRate, opts.InboundBurst, opts.InboundDuration, opts.InboundDrain)
	}
	if stopped != "" {
		p("Stopped early: %s.\n\n", stopped)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	type figure struct {
		label, format string
		of            func(natsWindow) float64
		onOnly        bool
	}
	figures := []figure{
		{"offered texts/s", "%.0f", func(x natsWindow) float64 { return float64(x.Sent) / x.Window.Seconds() }, false},
		{"delivered texts/s (first arrivals in the window)", "%.0f", func(x natsWindow) float64 { return x.Delivered() }, false},
		{"p50 send → receiver (ms)", "%.1f", func(x natsWindow) float64 { return ms(x.P50) }, false},
		{"p99 send → receiver (ms)", "%.1f", func(x natsWindow) float64 { return ms(x.P99) }, false},
		{"last arrival after the window (ms)", "%.0f", func(x natsWindow) float64 { return ms(x.LastAfter) }, false},
		{"server CPU (cores)", "%.2f", func(x natsWindow) float64 { return x.ServerCPU.Seconds() / x.Window.Seconds() }, false},
		{"server CPU per text (µs)", "%.0f", func(x natsWindow) float64 { return perText(x.ServerCPU, x.Unique) }, false},
		{"nats-server CPU per text (µs)", "%.0f", func(x natsWindow) float64 { return perText(x.NATSCPU, x.Unique) }, true},
		{"server + nats-server CPU per text (µs)", "%.0f", func(x natsWindow) float64 { return perText(x.ServerCPU+x.NATSCPU, x.Unique) }, false},
		{"events published per text", "%.2f", func(x natsWindow) float64 { return x.Published / float64(max(x.Unique, 1)) }, true},
		{"stream caught up after the drain (ms)", "%.0f", func(x natsWindow) float64 { return ms(x.CatchUp) }, true},
		{"network CPU (cores)", "%.2f", func(x natsWindow) float64 { return x.NetworkCPU.Seconds() / x.Window.Seconds() }, false},
	}
	over := func(s *natsSide, f func(natsWindow) float64) spread {
		xs := make([]float64, len(s.windows))
		for i, x := range s.windows {
			xs[i] = f(x)
		}
		return spreadOf(xs)
	}
	cell := func(format string, s spread, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf(format+" ("+format+"–"+format+")", s.med, s.lo, s.hi)
	}
	// rounds is how many rounds have a window of every side.
	rounds := len(sides[len(sides)-1].windows)
	for _, s := range sides {
		rounds = min(rounds, len(s.windows))
	}
	header := "| Figure: median (min–max) |"
	rule := "|---|"
	for _, s := range sides {
		header += " " + s.name() + " |"
		rule += "---:|"
	}
	if both {
		header += " on / off, median of the rounds' ratios (min–max) |"
		rule += "---:|"
	}
	p("%s\n%s\n", header, rule)
	for _, f := range figures {
		row := "| " + f.label + " |"
		for _, s := range sides {
			if f.onOnly && !s.on {
				row += " – |"
				continue
			}
			row += " " + cell(f.format, over(s, f.of), len(s.windows)) + " |"
		}
		if both {
			if f.onOnly || rounds == 0 {
				row += " – |"
			} else {
				ratios := make([]float64, 0, rounds)
				for r := range rounds {
					if off := f.of(sides[0].windows[r]); off != 0 {
						ratios = append(ratios, f.of(sides[1].windows[r])/off)
					}
				}
				if len(ratios) == 0 {
					row += " – |"
				} else {
					row += " " + cell("%.2f", spreadOf(ratios), len(ratios)) + " |"
				}
			}
		}
		p("%s\n", row)
	}
	for _, s := range sides {
		lost, dups, failed, foreign, pubFailed := 0, 0, 0, 0, 0.0
		loads := make([]string, len(s.windows))
		for i, x := range s.windows {
			lost += x.Lost
			dups += x.Dups
			failed += x.Failed
			foreign += x.Foreign
			pubFailed += x.Failures
			loads[i] = x.Load
		}
		p("\n%s, over its %d windows: lost %d, duplicates %d, texts the network refused %d, foreign arrivals %d", s.name(), len(s.windows), lost, dups, failed, foreign)
		if s.on {
			p(", failed publishes %.0f", pubFailed)
		}
		p(". Load average at each window's end: %s.\n", strings.Join(loads, "; "))
	}
}
