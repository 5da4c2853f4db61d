package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Goal 3 with the event stream on NATS JetStream (issue 36, integrations.md
// §2): the same inbound load with the sink off and on, so that what the
// sink costs the receiving path is a ratio within one run.

// The values of -inbound-nats.
const (
	InboundNATSOff  = "off"  // goal 3 as it is: no broker
	InboundNATSOn   = "on"   // goal 3 with --nats-url to a nats-server the program starts
	InboundNATSBoth = "both" // a server of each, their windows alternating
)

// InboundNATSModes are the values -inbound-nats takes.
func InboundNATSModes() []string { return []string{InboundNATSOff, InboundNATSOn, InboundNATSBoth} }

// natsStream is the stream the sink publishes to (wagraph's default).
const natsStream = "WAGRAPH"

// natsServer is a running nats-server with JetStream on a loopback port.
type natsServer struct {
	*child
	url string
}

// startNATS runs e.NATSServer with JetStream, its store in dir, and waits
// until it greets a client (its listener opens once JetStream is up).
func startNATS(e *env, dir string) (*natsServer, error) {
	if _, err := os.Stat(e.NATSServer); err != nil {
		return nil, fmt.Errorf("-nats-server %s: %w (make bin/nats-server builds it)", e.NATSServer, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c, err := startChild("nats-server", e.NATSServer, filepath.Join(dir, "nats-server.log"),
		"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", filepath.Join(dir, "jetstream"))
	if err != nil {
		return nil, err
	}
	n := &natsServer{child: c, url: "nats://127.0.0.1:" + strconv.Itoa(port)}
	if err := c.waitFor("nats-server greeting", 30*time.Second, func() (bool, error) { return natsGreets(port) }); err != nil {
		c.stop()
		return nil, err
	}
	return n, nil
}

// natsGreets dials the server and reads its INFO line.
func natsGreets(port int) (bool, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(line, "INFO "), fmt.Errorf("greeted with %q", line)
}

// natsSide is one configuration of the comparison: its rig, and its
// broker when the sink is on.
type natsSide struct {
	on      bool
	rig     *inboundRig
	nats    *natsServer // nil: the sink off
	windows []natsWindow
}

func (s *natsSide) name() string {
	if s.on {
		return "sink on"
	}
	return "sink off"
}

func (s *natsSide) stop() {
	if s.rig != nil {
		s.rig.stop()
	}
	if s.nats != nil {
		s.nats.stop()
	}
}

// natsWindow is one measured window of a side. ServerCPU (and NATSCPU)
// run from the window's start until the stream caught up after the drain:
// the sink's work is counted even when it finishes after the last
// webhook.
type natsWindow struct {
	inboundWindow
	NATSCPU   time.Duration // the broker's; 0 with the sink off
	CatchUp   time.Duration // from the drain's end until wagraph_nats_lag_events was 0
	Published float64       // events the stream acknowledged in the window (wagraph_nats_published_total)
	Failures  float64       // publishes that failed in it
}

// runInboundNATS runs goal 3's windows with the sink on (-inbound-nats on)
// or alternately off and on (both): one network process and one server per
// side, each side's sessions linked once; in each round a window of each
// side, the side that goes first alternating from round to round, so that
// a machine that gets busier or quieter over the run moves both alike.
func runInboundNATS(ctx context.Context, e *env, out io.Writer) error {
	var sides []*natsSide
	defer func() {
		for _, s := range sides {
			s.stop()
		}
	}()
	ons := []bool{true}
	if e.InboundNATS == InboundNATSBoth {
		ons = []bool{false, true}
	}
	for i, on := range ons {
		side := &natsSide{on: on}
		sides = append(sides, side)
		se := *e
		if i > 0 {
			// A side of its own: directory, database and debug port.
			se.dir = filepath.Join(e.dir, "sink-on")
			if err := os.Mkdir(se.dir, 0o700); err != nil {
				return err
			}
			if e.dbs != nil {
				var err error
				if se.dbURL, err = e.dbs.create(ctx, "inbound_nats"); err != nil {
					return err
				}
			}
			if e.DebugAddr != "" {
				var err error
				if se.DebugAddr, err = debugAddrOf(e.DebugAddr, 1); err != nil {
					return err
				}
			}
		}
		var extra []string
		if on {
			var err error
			if side.nats, err = startNATS(&se, se.dir); err != nil {
				return err
			}
			extra = []string{"--nats-url", side.nats.url, "--nats-stream", natsStream}
		}
		e.progress("%s: starting its network, server and sessions", side.name())
		var err error
		// No raw reference: both sides are wagraph's.
		if side.rig, err = startInboundRig(ctx, &se, false, extra...); err != nil {
			return fmt.Errorf("%s: %w", side.name(), err)
		}
		if on {
			// The warm-up's events on the stream before the first window.
			if _, err := waitStreamCaughtUp(ctx, side.rig.srv, e.InboundDrain); err != nil {
				return fmt.Errorf("%s, after the warm-up: %w", side.name(), err)
			}
		}
	}
	stopped := ""
rounds:
	for r := range e.Rounds {
		for k := range sides {
			side := sides[(r+k)%len(sides)]
			w, err := side.window(ctx, e)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, side.name(), err)
			}
			side.windows = append(side.windows, w)
			e.progress("round %d, %s: %s; server CPU %.2f cores, NATS %.2f, per text %.0f µs (+%.0f NATS), stream caught up %s after the drain, load %s",
				r+1, side.name(), w.inboundTally, w.ServerCPU.Seconds()/w.Window.Seconds(), w.NATSCPU.Seconds()/w.Window.Seconds(),
				perText(w.ServerCPU, w.Unique), perText(w.NATSCPU, w.Unique), w.CatchUp.Round(time.Millisecond), w.Load)
			if w.Lost > 0 {
				stopped = fmt.Sprintf("round %d's window with the %s did not drain within %s: the rounds after it were not run (its backlog would carry into them)",
					r+1, side.name(), e.InboundDrain)
				e.progress("%s", stopped)
				break rounds
			}
		}
	}
	writeInboundNATSReport(out, sides, stopped, e.Options)
	return nil
}

// window is one measured window of the side, with the broker's CPU and,
// with the sink on, the wait until the stream has every event stored.
func (s *natsSide) window(ctx context.Context, e *env) (natsWindow, error) {
	var w natsWindow
	before, err := s.sample(ctx)
	if err != nil {
		return w, err
	}
	if w.inboundWindow, err = s.rig.window(ctx, e, s.rig.sides()[0], inboundCase{Secrets: e.InboundSecrets == SecretsOn}, e.InboundRate, e.InboundDuration); err != nil {
		return w, err
	}
	if s.on {
		if w.CatchUp, err = waitStreamCaughtUp(ctx, s.rig.srv, e.InboundDrain); err != nil {
			return w, err
		}
	}
	after, err := s.sample(ctx)
	if err != nil {
		return w, err
	}
	w.ServerCPU, w.NATSCPU = after.server-before.server, after.nats-before.nats
	w.Published, w.Failures = after.published-before.published, after.failures-before.failures
	return w, nil
}

// sideSample is what a side's processes have done so far.
type sideSample struct {
	server, nats        time.Duration // CPU
	published, failures float64
}

func (s *natsSide) sample(ctx context.Context) (sideSample, error) {
	var out sideSample
	var err error
	if out.server, err = s.rig.srv.cpu(); err != nil {
		return out, err
	}
	if s.nats == nil {
		return out, nil
	}
	if out.nats, err = s.nats.cpu(); err != nil {
		return out, err
	}
	text, err := s.rig.srv.metrics(ctx)
	if err != nil {
		return out, err
	}
	for _, m := range []struct {
		name string
		dst  *float64
	}{{"wagraph_nats_published_total", &out.published}, {"wagraph_nats_publish_failures_total", &out.failures}} {
		v, found, err := metricValue(text, m.name)
		if err != nil {
			return out, err
		}
		if !found {
			return out, fmt.Errorf("/metrics has no %s: is the server's sink on?", m.name)
		}
		*m.dst = v
	}
	return out, nil
}

// waitStreamCaughtUp polls the server's /metrics until no event stored is
// waiting for the stream (wagraph_nats_lag_events 0), and returns how long
// that took.
func waitStreamCaughtUp(ctx context.Context, s *wagraphServer, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	err := s.waitFor("the NATS stream caught up", limit, func() (bool, error) {
		text, err := s.metrics(ctx)
		if err != nil {
			return false, err
		}
		v, found, err := metricValue(text, "wagraph_nats_lag_events")
		if err != nil || !found {
			return false, fmt.Errorf("wagraph_nats_lag_events: found %v, %v", found, err)
		}
		return v == 0, fmt.Errorf("%.0f events behind", v)
	})
	return time.Since(start), err
}

// perText is CPU time per text received, in µs.
func perText(cpu time.Duration, texts int) float64 {
	return float64(cpu.Microseconds()) / float64(max(texts, 1))
}
