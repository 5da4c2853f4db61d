// Command wagraph-bench is issue 11's load program: it starts a built
// wagraph (and a bare net/http reference) as child processes and measures
// them over loopback; see internal/bench and BENCHMARKS.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wagraph/wagraph/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx)
	stop()
	os.Exit(code)
}

func run(ctx context.Context) int {
	var opts bench.Options
	goals := flag.String("goals", strings.Join(bench.DefaultGoals(), ","), "the goals to measure, comma-separated, in order (of "+strings.Join(bench.GoalNames(), ", ")+")")
	flag.StringVar(&opts.Wagraph, "wagraph", "bin/wagraph", "the built wagraph binary to measure")
	flag.IntVar(&opts.Rounds, "rounds", 5, "rounds; each measures every target once")
	flag.IntVar(&opts.Conns, "conns", 64, "concurrent keep-alive connections")
	flag.DurationVar(&opts.Duration, "duration", 5*time.Second, "measured time of each target in each round")
	flag.DurationVar(&opts.Warmup, "warmup", time.Second, "load before each measured window, not counted")
	flag.StringVar(&opts.DebugAddr, "debug-addr", "", "wagraph's --debug-addr (loopback), to profile it under the load")
	flag.StringVar(&opts.Postgres, "postgres", "", "URL of a PostgreSQL server whose user may create databases: each goal's wagraph stores everything in a database created for it (default: SQLite)")
	flag.IntVar(&opts.Servers, "servers", 1, "goals sends and fanout: wagraph processes on the goal's PostgreSQL database (a cluster; needs -postgres); the load is spread over them")
	sendSessions := flag.String("send-sessions", "1,50", "goal sends: the session counts to send from, comma-separated")
	flag.IntVar(&opts.SendWorkers, "send-workers", 16, "goal sends: concurrent senders of each case, on each side")
	flag.DurationVar(&opts.SendDuration, "send-duration", 0, "goal sends: measured time of each side of each case (0: -duration)")
	flag.DurationVar(&opts.SendWarmup, "send-warmup", 0, "goal sends: load before each measured window (0: -warmup)")
	flag.IntVar(&opts.Sessions, "memory-sessions", 1000, "memory goal: linked idle sessions")
	flag.IntVar(&opts.LinkParallel, "memory-link-parallel", 16, "memory goal: sessions linked at once")
	flag.IntVar(&opts.Restarts, "memory-restarts", 5, "memory goal: server restarts to time")
	flag.IntVar(&opts.FanoutSubscribers, "fanout-subscribers", 1000, "fanout: websocket subscribers of the one session")
	flag.Float64Var(&opts.FanoutRate, "fanout-rate", 60, "fanout: texts per second sent to the session in each round")
	flag.DurationVar(&opts.FanoutWindow, "fanout-window", 20*time.Second, "fanout: measured window of each round")
	flag.DurationVar(&opts.FanoutStepWindow, "fanout-step-window", 10*time.Second, "fanout: window of each rate of the step-up (run when the goal is not met); 0: no step-up")
	flag.BoolVar(&opts.FanoutCeiling, "fanout-ceiling", false, "fanout: run the step-up to the highest rate kept up even when the goal is met")
	// Goals 3 and 6 (inbound, soak).
	flag.IntVar(&opts.InboundSessions, "inbound-sessions", 100, "goals 3 and 6: sessions linked, each with a webhook to the load program's receiver")
	flag.IntVar(&opts.InboundRate, "inbound-rate", 2000, "goal 3: texts offered per second over all sessions (the soak offers half)")
	flag.IntVar(&opts.InboundBurst, "inbound-burst", 5, "goals 3 and 6: texts per request to the network's control API (to one session)")
	flag.DurationVar(&opts.InboundDuration, "inbound-duration", time.Minute, "goal 3: each measured window (-rounds rounds, each a window of every case on each side)")
	flag.DurationVar(&opts.InboundDrain, "inbound-drain", 30*time.Second, "goals 3 and 6: the longest wait for the last texts after a window")
	flag.BoolVar(&opts.InboundRaw, "inbound-raw", true, "goal 3: the raw-whatsmeow reference, as many raw clients receiving the same bursts in windows of their own (issue 35, goal 2)")
	flag.StringVar(&opts.InboundSecrets, "inbound-secrets", bench.SecretsBoth, "goals 3 and 6: texts with message secrets as phones send them ("+bench.SecretsOn+"), without ("+bench.SecretsOff+"), or goal 3 measures both ("+bench.SecretsBoth+"; the soak then sends without)")
	flag.DurationVar(&opts.SoakDuration, "soak-duration", 30*time.Minute, "goal 6: the soak's length")
	flag.DurationVar(&opts.SoakMark, "soak-mark", 5*time.Minute, "goal 6: growth is measured from this point of the soak")
	flag.DurationVar(&opts.SoakSample, "soak-sample", 10*time.Second, "goal 6: how often the server's RSS and goroutines are read")
	flag.StringVar(&opts.InboundNATS, "inbound-nats", bench.InboundNATSOff, "goal 3 with the NATS JetStream sink: "+strings.Join(bench.InboundNATSModes(), ", ")+
		" (both: a server with the sink and one without, their windows alternating, compared in one table)")
	flag.StringVar(&opts.NATSServer, "nats-server", "bin/nats-server", "goal 3 with -inbound-nats on or both: the nats-server binary to start (make bin/nats-server)")
	serveBare := flag.String("serve-bare", "", "internal: serve this file's bytes as the reference server")
	flag.Parse()

	if *serveBare != "" {
		if err := bench.ServeBare(ctx, *serveBare); err != nil {
			fmt.Fprintln(os.Stderr, "wagraph-bench:", err)
			return 1
		}
		return 0
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wagraph-bench:", err)
		return 1
	}
	opts.Self = self
	opts.Goals = strings.Split(*goals, ",")
	for _, n := range strings.Split(*sendSessions, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v < 1 {
			fmt.Fprintf(os.Stderr, "wagraph-bench: -send-sessions: %q is not a count of sessions\n", n)
			return 2
		}
		opts.SendSessions = append(opts.SendSessions, v)
	}
	opts.Progress = os.Stderr
	if err := bench.Run(ctx, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wagraph-bench:", err)
		return 1
	}
	return 0
}
