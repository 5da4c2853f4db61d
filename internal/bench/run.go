package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options are the load program's settings.
type Options struct {
	Wagraph string // the built wagraph binary
	Self    string // this program, re-executed as the reference server
	// Goals are the goals to measure, in order (names of the goals
	// table); empty is every goal.
	Goals    []string
	Rounds   int
	Conns    int
	Warmup   time.Duration
	Duration time.Duration
	// DebugAddr, when set, is wagraph's --debug-addr: profile it while
	// the load runs.
	DebugAddr string
	// Progress, when set, gets a line for each measurement as it ends.
	Progress io.Writer
	// Postgres, when set, is the URL of a PostgreSQL server whose user may
	// create databases: every goal's wagraph then stores everything in a
	// database created for that goal (--database-url), instead of SQLite.
	Postgres string
	// Servers is how many wagraph processes goals sends and fanout start on
	// their PostgreSQL database (a cluster); the other goals start one.
	// 0 is 1.
	Servers int
	// Goal 2 (sends): the session counts to send from (empty: 1 and 50),
	// the concurrent senders of each case (0: 16), and each measurement's
	// window and warm-up (0: Duration and Warmup; goal 2 measures 8 times a
	// round, so a short run shortens them).
	SendSessions []int
	SendWorkers  int
	SendDuration time.Duration
	SendWarmup   time.Duration

	// Goal 5 (memory): how many sessions to link, how many at once, and
	// how many restarts to time.
	Sessions     int
	LinkParallel int
	Restarts     int

	// Goal 4 (fan-out): subscribers of one session, the texts per second
	// sent to it, each round's measured window, the step-up's window, and
	// whether the step-up runs even when the goal is met.
	FanoutSubscribers int
	FanoutRate        float64
	FanoutWindow      time.Duration
	FanoutStepWindow  time.Duration
	FanoutCeiling     bool

	// Goals 3 and 6 (inbound, soak): the sessions linked, the texts
	// offered each second over all of them (the soak offers half), the
	// texts per control request, each measured window of goal 3 (Rounds
	// windows) and the longest wait for the stragglers after it; the
	// soak's length, the mark growth is measured from, and how often the
	// server is read.
	InboundSessions int
	InboundRate     int
	InboundBurst    int
	InboundDuration time.Duration
	InboundDrain    time.Duration
	// InboundRaw adds goal 3's raw-whatsmeow reference (issue 35, goal 2);
	// InboundSecrets says whether its texts carry message secrets
	// (SecretsOff, SecretsOn, or SecretsBoth: each round measures both; ""
	// is both). The soak sends with secrets only with SecretsOn.
	InboundRaw     bool
	InboundSecrets string
	SoakDuration   time.Duration
	SoakMark       time.Duration
	SoakSample     time.Duration

	// Goal 3 with the NATS JetStream sink (issue 36): InboundNATS is off
	// (or ""), on, or both (a server of each, windows alternating; see
	// inbound_nats.go); NATSServer is the nats-server binary started for it.
	InboundNATS string
	NATSServer  string
}

// goal is one of issue 11's goals as the load program measures it: it
// starts what it needs in dir (a fresh directory of its own) and writes
// its section of the report to out.
type goal struct {
	name string
	run  func(ctx context.Context, env *env, out io.Writer) error
}

// goals is every goal, in the order of issue 11.
var goals = []goal{
	{"overhead", runOverhead},
	{"sends", runSends},
	{"inbound", runInbound},
	{"fanout", runFanout},
	{"memory", runMemory},
	{"soak", runSoak}, // separate (make soak): not in DefaultGoals
}

// GoalNames are the goals the load program knows, in order.
func GoalNames() []string {
	names := make([]string, len(goals))
	for i, g := range goals {
		names[i] = g.name
	}
	return names
}

// env is what a goal runs with: the options, its own directory and a fresh
// admin token.
type env struct {
	Options
	dir   string
	token string
	dbURL string     // the goal's PostgreSQL database; "" on SQLite
	dbs   *databases // creates further databases; nil on SQLite
	// dbCPU is the CPU time of PostgreSQL's processes so far; nil on
	// SQLite (its work is in wagraph's process) or when the server is not
	// on this machine.
	dbCPU func() (time.Duration, error)
}

// servers is how many processes a goal that can spread its load starts.
func (e *env) servers() int { return max(e.Servers, 1) }

// backendLine says what a goal's report was measured on.
func backendLine(postgres bool, goal string, servers int) string {
	if !postgres {
		return "Backend: SQLite (the default), one wagraph process."
	}
	if servers > 1 && clusterGoal(goal) {
		return fmt.Sprintf("Backend: PostgreSQL (a database created for this goal), %d wagraph processes on it (a cluster).", servers)
	}
	return "Backend: PostgreSQL (a database created for this goal), one wagraph process."
}

// clusterGoal reports whether a goal spreads its load over -servers
// processes.
func clusterGoal(name string) bool { return name == "sends" || name == "fanout" }

// progress writes one line to the progress writer, if any.
func (e *env) progress(format string, a ...any) {
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, format+"\n", a...)
	}
}

// Run measures the chosen goals of issue 11 in turn and writes each one's
// section to out. The children run in a temporary directory removed at the
// end (their logs with it, unless Run fails: then the directory is kept and
// named in the error).
func Run(ctx context.Context, opts Options, out io.Writer) (err error) {
	if opts.Rounds < 1 || opts.Conns < 1 || opts.Duration <= 0 || opts.Warmup < 0 {
		return fmt.Errorf("rounds and conns must be at least 1 and the duration above 0")
	}
	chosen := goals
	if len(opts.Goals) > 0 {
		chosen = nil
		for _, name := range opts.Goals {
			i := slices.IndexFunc(goals, func(g goal) bool { return g.name == name })
			if i < 0 {
				return fmt.Errorf("goal %q: unknown; the goals are %s", name, strings.Join(GoalNames(), ", "))
			}
			chosen = append(chosen, goals[i])
		}
	}
	if opts.InboundNATS != "" && !slices.Contains(InboundNATSModes(), opts.InboundNATS) {
		return fmt.Errorf("-inbound-nats %q: want one of %s", opts.InboundNATS, strings.Join(InboundNATSModes(), ", "))
	}
	if opts.Servers > 1 && opts.Postgres == "" {
		return fmt.Errorf("-servers %d needs -postgres: processes form a cluster on one PostgreSQL database", opts.Servers)
	}
	var (
		dbs   *databases
		dbCPU func() (time.Duration, error)
	)
	if opts.Postgres != "" {
		if dbs, err = openDatabases(ctx, opts.Postgres); err != nil {
			return err
		}
		defer func() {
			if cerr := dbs.close(); err == nil {
				err = cerr
			}
		}()
		if pm, perr := dbs.postmaster(ctx); perr != nil {
			fmt.Fprintf(out, "PostgreSQL's CPU is not measured: %v\n\n", perr)
		} else {
			dbCPU = func() (time.Duration, error) { return postgresCPU(pm) }
		}
	}
	dir, err := os.MkdirTemp("", "wagraph-bench-")
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			os.RemoveAll(dir)
		} else {
			err = fmt.Errorf("%w (logs kept in %s)", err, dir)
		}
	}()
	for _, g := range chosen {
		token, err := randomToken()
		if err != nil {
			return err
		}
		e := &env{Options: opts, dir: filepath.Join(dir, g.name), token: token, dbs: dbs, dbCPU: dbCPU}
		if err := os.Mkdir(e.dir, 0o700); err != nil {
			return err
		}
		if dbs != nil {
			if e.dbURL, err = dbs.create(ctx, g.name); err != nil {
				return err
			}
		}
		line := backendLine(dbs != nil, g.name, e.servers())
		e.progress("== goal %s (%s)", g.name, line)
		fmt.Fprintf(out, "%s\n\n", line)
		if err := g.run(ctx, e, out); err != nil {
			return fmt.Errorf("goal %s: %w", g.name, err)
		}
		fmt.Fprintln(out)
	}
	return nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	return "bench-" + hex.EncodeToString(b), nil
}
