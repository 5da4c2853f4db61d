package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// Goal 3 of issue 11 (issue 35's goal 1), and issue 35's goal 2: wagraph's
// delivered rate against raw whatsmeow's received rate in the same run.
const (
	goalInboundRate = 2000.0
	goalInboundP99  = 250 * time.Millisecond
	goalInboundRaw  = 0.60
)

// inboundWindow is one measured window of goal 3, on one side.
type inboundWindow struct {
	inboundTally
	ServerCPU, NetworkCPU time.Duration // over the window and its drain
	// SelfCPU is the load program's: the sender and the webhook receiver
	// (wagraph's side), or the sender and the raw clients (raw's side).
	SelfCPU   time.Duration
	ServerRSS int64  // bytes, at the drain's end
	Load      string // /proc/loadavg at the window's end
}

// inboundCase is one kind of text goal 3 offers: with message secrets (as
// phones send texts now: whatsmeow stores one per text received) or
// without (the shape of the figures before issue 35).
type inboundCase struct {
	Secrets bool
}

func (c inboundCase) String() string {
	if c.Secrets {
		return "texts with message secrets"
	}
	return "texts without message secrets"
}

// Values of -inbound-secrets.
const (
	SecretsOff  = "off"
	SecretsOn   = "on"
	SecretsBoth = "both"
)

// inboundCasesOf is the cases of an -inbound-secrets value.
func inboundCasesOf(secrets string) ([]inboundCase, error) {
	switch secrets {
	case SecretsOff:
		return []inboundCase{{}}, nil
	case SecretsOn:
		return []inboundCase{{Secrets: true}}, nil
	case SecretsBoth, "":
		return []inboundCase{{}, {Secrets: true}}, nil
	}
	return nil, fmt.Errorf("-inbound-secrets %q: must be %s, %s or %s", secrets, SecretsOff, SecretsOn, SecretsBoth)
}

// inboundRound is one round of goal 3: each case's window on each side
// (sideWagraph, sideRaw).
type inboundRound map[inboundCase]map[string]inboundWindow

// runInbound measures goal 3 (inbound events stored and delivered to a
// webhook receiver) and its raw reference: one network process and one
// server, the sessions linked once, each with a webhook to the load
// program's receiver, and as many raw whatsmeow clients in this process
// on accounts of their own, written to by the same contacts; then
// e.Rounds rounds, each a window of every case on each side (the sides in
// turn, the order swapped every round so that both see the same machine),
// each window offering InboundRate texts/s for InboundDuration and
// draining (up to InboundDrain) before the next, so that every window
// starts with an empty outbox.
func runInbound(ctx context.Context, e *env, out io.Writer) error {
	if e.InboundNATS != "" && e.InboundNATS != InboundNATSOff {
		return runInboundNATS(ctx, e, out) // inbound_nats.go
	}
	cases, err := inboundCasesOf(e.InboundSecrets)
	if err != nil {
		return err
	}
	rig, err := startInboundRig(ctx, e, e.InboundRaw)
	if err != nil {
		return err
	}
	defer rig.stop()
	sides := rig.sides()
	var rounds []inboundRound
	for r := range e.Rounds {
		round, ok, err := rig.round(ctx, e, r, cases, sides)
		if err != nil {
			return err
		}
		rounds = append(rounds, round)
		if !ok {
			// Its backlog would carry into the next window: the
			// figures of the windows after it would measure that.
			e.progress("round %d: a window did not drain within %s: the rounds after it are not run", r+1, e.InboundDrain)
			break
		}
	}
	writeInboundReport(out, rounds, cases, len(sides) > 1, e.Options)
	return nil
}

// round runs round r: every case on every side, the sides' order swapped
// on odd rounds. ok is false when a window did not drain, and the round
// then ends there.
func (rig *inboundRig) round(ctx context.Context, e *env, r int, cases []inboundCase, sides []*inboundSide) (inboundRound, bool, error) {
	round := inboundRound{}
	for _, c := range cases {
		round[c] = map[string]inboundWindow{}
		for i := range sides {
			side := sides[i]
			if r%2 == 1 {
				side = sides[len(sides)-1-i]
			}
			w, err := rig.window(ctx, e, side, c, e.InboundRate, e.InboundDuration)
			if err != nil {
				return nil, false, fmt.Errorf("round %d, %s, %s: %w", r+1, c, side.name, err)
			}
			round[c][side.name] = w
			e.progress("round %d, %s, %s: %s; server CPU %.2f cores, network %.2f, load program %.2f, load %s", r+1, c, side.name, w.inboundTally,
				w.ServerCPU.Seconds()/w.Window.Seconds(), w.NetworkCPU.Seconds()/w.Window.Seconds(), w.SelfCPU.Seconds()/w.Window.Seconds(), w.Load)
			if w.Lost > 0 {
				return round, false, nil
			}
		}
	}
	return round, true, nil
}

// inboundRig is what goals 3 and 6 run on.
type inboundRig struct {
	warn     func(format string, a ...any)
	net      *network
	srv      *wagraphServer
	recv     *receiver
	bursts   *burstClient
	sessions []inboundSession
	raw      *rawReceivers // nil without the raw reference
}

// inboundSide is where a window's texts go: wagraph's sessions, whose
// texts the webhook receiver reports, or the raw clients, which report
// them themselves.
type inboundSide struct {
	name     string // sideWagraph or sideRaw
	sessions []inboundSession
	track    *atomic.Pointer[tracker]
}

// sides are wagraph's side and, with the reference, raw's.
func (rig *inboundRig) sides() []*inboundSide {
	out := []*inboundSide{{name: sideWagraph, sessions: rig.sessions, track: &rig.recv.track}}
	if rig.raw != nil {
		out = append(out, &inboundSide{name: sideRaw, sessions: rig.raw.sessions, track: &rig.raw.track})
	}
	return out
}

// startInboundRig starts the network, the server (extra are more flags of
// it) and the receiver, links the sessions and, with raw, the raw clients,
// and warms both up.
func startInboundRig(ctx context.Context, e *env, raw bool, extra ...string) (*inboundRig, error) {
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
	if raw {
		start = time.Now()
		if rig.raw, err = linkRawReceivers(ctx, e, rig.net, e.InboundSessions); err != nil {
			return nil, err
		}
		e.progress("%d raw whatsmeow clients linked in %s", len(rig.raw.sessions), time.Since(start).Round(time.Millisecond))
	}
	rig.bursts = newBurstClient(rig.net.control)
	// One text to each session first, not measured: the first message of
	// a contact sets up its Signal session and its chat (chats.upsert).
	for _, side := range rig.sides() {
		if _, err := rig.run(ctx, side, inboundCase{}, 0, len(side.sessions), time.Second, e.InboundDrain); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", side.name, err)
		}
	}
	ok = true
	return rig, nil
}

func (rig *inboundRig) stop() {
	if rig.raw != nil {
		rig.raw.close()
	}
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

// run offers rate texts/s of case c (in bursts of burst) to side for d
// starting 100 ms from now, drains, and returns the tracker; losses are an
// error only of the caller's choosing (it reads the tally).
func (rig *inboundRig) run(ctx context.Context, side *inboundSide, c inboundCase, burst, rate int, d, drainLimit time.Duration) (*tracker, error) {
	tag, err := textTag()
	if err != nil {
		return nil, err
	}
	if burst < 1 {
		burst = 1
	}
	from := time.Now().Add(100 * time.Millisecond)
	t := newTracker(tag, from, from.Add(d))
	side.track.Store(t)
	err = offer(ctx, rig.bursts, side.sessions, t, offerOptions{Rate: rate, Burst: burst, Tick: 10 * time.Millisecond, Secrets: c.Secrets})
	if err != nil && ctx.Err() == nil {
		// Counted in the tally as failed sends; the first one is told.
		rig.warn("network control API: %v", err)
	}
	drain(ctx, t, drainLimit)
	return t, ctx.Err()
}

// window is one measured window of case c on side: offered load, drain,
// and each process's CPU over both.
func (rig *inboundRig) window(ctx context.Context, e *env, side *inboundSide, c inboundCase, rate int, d time.Duration) (inboundWindow, error) {
	self := os.Getpid()
	read := func() (srv, net, me time.Duration, err error) {
		if srv, err = rig.srv.cpu(); err != nil {
			return
		}
		if net, err = rig.net.cpu(); err != nil {
			return
		}
		me, err = processCPU(self)
		return
	}
	scpu0, ncpu0, mcpu0, err := read()
	if err != nil {
		return inboundWindow{}, err
	}
	t, err := rig.run(ctx, side, c, e.InboundBurst, rate, d, e.InboundDrain)
	if err != nil {
		return inboundWindow{}, err
	}
	w := inboundWindow{inboundTally: t.tally(), Load: loadAverage()}
	scpu1, ncpu1, mcpu1, err := read()
	if err != nil {
		return w, err
	}
	w.ServerCPU, w.NetworkCPU, w.SelfCPU = scpu1-scpu0, ncpu1-ncpu0, mcpu1-mcpu0
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
