package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
)

// Goal 3 of issue 11.
const (
	goalInboundRate = 2000.0
	goalInboundP99  = 250 * time.Millisecond
)

// inboundWindow is one measured window of goal 3.
type inboundWindow struct {
	inboundTally
	ServerCPU, NetworkCPU time.Duration // over the window and its drain
	ServerRSS             int64         // bytes, at the drain's end
	Load                  string        // /proc/loadavg at the window's end
}

// runInbound measures goal 3 (inbound events stored and delivered to a
// webhook receiver): one network process and one server, the sessions
// linked once, each with a webhook to the load program's receiver; then
// e.Rounds windows in a row on them, each offering InboundRate texts/s
// for InboundDuration and draining (up to InboundDrain) before the next,
// so that every window starts with an empty outbox.
func runInbound(ctx context.Context, e *env, out io.Writer) error {
	if e.InboundNATS != "" && e.InboundNATS != InboundNATSOff {
		return runInboundNATS(ctx, e, out) // inbound_nats.go
	}
	rig, err := startInboundRig(ctx, e)
	if err != nil {
		return err
	}
	defer rig.stop()
	var windows []inboundWindow
	for r := range e.Rounds {
		w, err := rig.window(ctx, e, e.InboundRate, e.InboundDuration)
		if err != nil {
			return fmt.Errorf("window %d: %w", r+1, err)
		}
		windows = append(windows, w)
		e.progress("window %d: %s; server CPU %.2f cores, network %.2f, load %s", r+1, w.inboundTally,
			w.ServerCPU.Seconds()/w.Window.Seconds(), w.NetworkCPU.Seconds()/w.Window.Seconds(), w.Load)
		if w.Lost > 0 {
			// Its backlog would carry into the next window: the
			// figures of the windows after it would measure that.
			e.progress("window %d did not drain within %s: the windows after it are not run", r+1, e.InboundDrain)
			break
		}
	}
	writeInboundReport(out, windows, e.Rounds, e.Options)
	return nil
}

// inboundRig is what goals 3 and 6 run on.
type inboundRig struct {
	warn     func(format string, a ...any)
	net      *network
	srv      *wagraphServer
	recv     *receiver
	bursts   *burstClient
	sessions []inboundSession
}

// startInboundRig starts the rig; extra are more flags of its server.
func startInboundRig(ctx context.Context, e *env, extra ...string) (*inboundRig, error) {
	if e.InboundSessions < 1 || e.InboundRate < 1 || e.InboundBurst < 1 || e.InboundDuration <= 0 {
		return nil, fmt.Errorf("inbound sessions, rate, burst and duration must be above 0")
	}
	rig := &inboundRig{warn: e.progress}
	ok := false
	defer func() {
		if !ok {
			rig.stop()
		}
	}()
	var err error
	if rig.net, err = startNetwork(e); err != nil {
		return nil, err
	}
	if rig.srv, err = startWagraph(e, append(rig.net.serverArgs(), extra...)...); err != nil {
		return nil, err
	}
	if rig.recv, err = startReceiver(); err != nil {
		return nil, err
	}
	start := time.Now()
	if rig.sessions, err = linkInbound(ctx, rig.srv, e.InboundSessions, rig.recv.url); err != nil {
		return nil, err
	}
	e.progress("%d sessions linked in %s", len(rig.sessions), time.Since(start).Round(time.Millisecond))
	rig.bursts = newBurstClient(rig.net.control)
	// One text to each session first, not measured: the first message of
	// a contact sets up its Signal session and its chat (chats.upsert).
	if _, err := rig.run(ctx, 0, len(rig.sessions), time.Second, e.InboundDrain); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	ok = true
	return rig, nil
}

func (rig *inboundRig) stop() {
	if rig.srv != nil {
		rig.srv.stop()
	}
	if rig.net != nil {
		rig.net.stop()
	}
	if rig.recv != nil {
		rig.recv.close()
	}
	if rig.bursts != nil {
		rig.bursts.http.CloseIdleConnections()
	}
}

// run offers rate texts/s (in bursts of burst) for d starting 100 ms from
// now, drains, and returns the tracker; losses are an error only of the
// caller's choosing (it reads the tally).
func (rig *inboundRig) run(ctx context.Context, burst, rate int, d, drainLimit time.Duration) (*tracker, error) {
	tag, err := textTag()
	if err != nil {
		return nil, err
	}
	if burst < 1 {
		burst = 1
	}
	from := time.Now().Add(100 * time.Millisecond)
	t := newTracker(tag, from, from.Add(d))
	rig.recv.track.Store(t)
	err = offer(ctx, rig.bursts, rig.sessions, t, offerOptions{Rate: rate, Burst: burst, Tick: 10 * time.Millisecond})
	if err != nil && ctx.Err() == nil {
		// Counted in the tally as failed sends; the first one is told.
		rig.warn("network control API: %v", err)
	}
	drain(ctx, t, drainLimit)
	return t, ctx.Err()
}

// window is one measured window: offered load, drain, and each process's
// CPU over both.
func (rig *inboundRig) window(ctx context.Context, e *env, rate int, d time.Duration) (inboundWindow, error) {
	scpu0, err := rig.srv.cpu()
	if err != nil {
		return inboundWindow{}, err
	}
	ncpu0, err := rig.net.cpu()
	if err != nil {
		return inboundWindow{}, err
	}
	t, err := rig.run(ctx, e.InboundBurst, rate, d, e.InboundDrain)
	if err != nil {
		return inboundWindow{}, err
	}
	w := inboundWindow{inboundTally: t.tally(), Load: loadAverage()}
	scpu1, err := rig.srv.cpu()
	if err != nil {
		return w, err
	}
	ncpu1, err := rig.net.cpu()
	if err != nil {
		return w, err
	}
	w.ServerCPU, w.NetworkCPU = scpu1-scpu0, ncpu1-ncpu0
	w.ServerRSS, err = processRSS(rig.srv.cmd.Process.Pid)
	return w, err
}

// textTag is a tag no other window's texts carry.
func textTag() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "in" + hex.EncodeToString(b), nil
}

// processRSS is VmRSS of a process, in bytes.
func processRSS(pid int) (int64, error) {
	m, err := processMemory(pid)
	return m.RSS, err
}

// writeInboundReport writes goal 3's table: each figure's median, min and
// max over the windows, and whether the goal is met.
func writeInboundReport(w io.Writer, windows []inboundWindow, planned int, opts Options) {
	over := func(f func(inboundWindow) float64) spread {
		xs := make([]float64, len(windows))
		for i, win := range windows {
			xs[i] = f(win)
		}
		return spreadOf(xs)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Goal 3, inbound events: %d sessions linked to a network process, each with a webhook (inbound-message.upsert) to a receiver in the load program; "+
		"%d windows in a row on the same server, each offering %d texts/s (open loop, %d texts per control request, sessions in turn) for %s, "+
		"then draining up to %s. Latency is the receiver's arrival less the time the batch was due at the network.\n\n",
		opts.InboundSessions, len(windows), opts.InboundRate, opts.InboundBurst, opts.InboundDuration, opts.InboundDrain)
	if len(windows) < planned {
		p("Only %d of the %d windows ran: the last one did not drain within %s, and its backlog would have carried into the next.\n\n",
			len(windows), planned, opts.InboundDrain)
	}
	p("| Figure | median | min | max |\n|---|---:|---:|---:|\n")
	row3 := func(label, format string, s spread) {
		p("| %s | "+format+" | "+format+" | "+format+" |\n", label, s.med, s.lo, s.hi)
	}
	delivered := over(func(x inboundWindow) float64 { return x.Delivered() })
	p99 := over(func(x inboundWindow) float64 { return ms(x.P99) })
	row3("offered texts/s", "%.0f", over(func(x inboundWindow) float64 { return float64(x.Sent) / x.Window.Seconds() }))
	row3("delivered texts/s (first arrivals in the window)", "%.0f", delivered)
	row3("p50 send → receiver (ms)", "%.1f", over(func(x inboundWindow) float64 { return ms(x.P50) }))
	row3("p99 send → receiver (ms)", "%.1f", p99)
	row3("max send → receiver (ms)", "%.1f", over(func(x inboundWindow) float64 { return ms(x.Max) }))
	row3("last arrival after the window (ms)", "%.0f", over(func(x inboundWindow) float64 { return ms(x.LastAfter) }))
	row3("server CPU (cores)", "%.2f", over(func(x inboundWindow) float64 { return x.ServerCPU.Seconds() / x.Window.Seconds() }))
	row3("server CPU per text (µs)", "%.0f", over(func(x inboundWindow) float64 {
		return float64(x.ServerCPU.Microseconds()) / float64(max(x.Unique, 1))
	}))
	row3("network CPU (cores)", "%.2f", over(func(x inboundWindow) float64 { return x.NetworkCPU.Seconds() / x.Window.Seconds() }))
	row3("server RSS after the window (MiB)", "%.0f", over(func(x inboundWindow) float64 { return float64(x.ServerRSS) / (1 << 20) }))
	lost, dups, failed, foreign := 0, 0, 0, 0
	loads := make([]string, len(windows))
	for i, x := range windows {
		lost += x.Lost
		dups += x.Dups
		failed += x.Failed
		foreign += x.Foreign
		loads[i] = x.Load
	}
	p("\nOver all windows: lost %d, duplicates %d, texts the network refused %d, foreign arrivals %d. Load average at each window's end: %s.\n\n",
		lost, dups, failed, foreign, strings.Join(loads, "; "))
	p("| Goal 3 part | target | median | |\n|---|---|---:|---|\n")
	p("| delivered | ≥ %.0f/s | %.0f/s | %s |\n", goalInboundRate, delivered.med, metText(delivered.med >= goalInboundRate))
	p("| p99 send → receiver | < %s | %.1f ms | %s |\n", goalInboundP99, p99.med, metText(p99.med < ms(goalInboundP99)))
	p("| lost (all windows) | 0 | %d | %s |\n", lost, metText(lost == 0 && failed == 0))
	all := delivered.med >= goalInboundRate && p99.med < ms(goalInboundP99) && lost == 0 && failed == 0 && len(windows) == planned
	p("\nGoal 3: %s.\n", metText(all))
}
