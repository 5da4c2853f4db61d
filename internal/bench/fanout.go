package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// Goal 4 of issue 11: subscription fan-out.
const goalDeliveries = 50_000 // deliveries per second to the subscribers of one session

// The session's account and the contact whose phone sends it the texts.
const (
	fanoutAccount = "4915550088001"
	fanoutContact = "4915550088002"
)

// fanoutSampleEvery: every this many subscribers, one records the latency of
// each text it receives (the latency sample).
const fanoutSampleEvery = 10

// fanoutDrain bounds the wait, after a window, for every subscriber to have
// received the last text sent: one that has not by then counts as behind.
const fanoutDrain = 30 * time.Second

// fanoutBacklog bounds the wait, before a window, for what the server had
// not delivered yet (a server behind by more ends the run).
const fanoutBacklog = 5 * time.Minute

// fanout is the goal's set-up: a network process, a server with one linked
// session, the subscribers, and the sender.
type fanout struct {
	e      *env
	net    *network
	srvs   servers
	holder int // the server holding the session's lease
	subs   *subscribers
	sess   string
	next   int64 // the number of the next text
	http   *http.Client
}

// fanoutRound is one measured window at one rate.
type fanoutRound struct {
	Rate       float64 // texts per second asked of the network
	Window     time.Duration
	Sent       int64
	Deliveries int64 // texts received by all subscribers inside the window
	CutOff     int   // subscribers whose stream ended in the window or its drain
	Gaps       int64
	Disorder   int64
	Behind     int // subscribers without the last text fanoutDrain after the window
	P50, P99   time.Duration
	ServerCPU  time.Duration   // all the servers together
	ServerCPUs []time.Duration // each server's, in order
	// With several servers, the latency of the subscribers on the
	// session's holder and of those on the other processes (the events
	// reach them through PostgreSQL's NOTIFY).
	HolderP50, HolderP99, RemoteP50, RemoteP99 time.Duration
	NetworkCPU                                 time.Duration
	DBCPU                                      time.Duration // PostgreSQL's processes; 0 on SQLite
	SelfCPU                                    time.Duration // the load program's: its 1,000 websocket clients
	ServerRSS                                  int64         // bytes, all the servers together, at the window's end
	Load                                       string        // the load average at the window's end
}

// PerSecond is the deliveries each second of the window.
func (r fanoutRound) PerSecond() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Deliveries) / r.Window.Seconds()
}

// clean reports whether every subscriber got every text, in order, and
// none was cut off.
func (r fanoutRound) clean() bool {
	return r.CutOff == 0 && r.Gaps == 0 && r.Disorder == 0 && r.Behind == 0
}

// runFanout measures goal 4: a network process sends texts to a session at
// a steady rate and 1,000 websocket subscribers of that session's events
// count what they receive.
func runFanout(ctx context.Context, e *env, out io.Writer) error {
	if e.FanoutSubscribers < 1 || e.FanoutRate <= 0 || e.FanoutWindow <= 0 || e.FanoutStepWindow < 0 {
		return fmt.Errorf("fanout-subscribers must be at least 1, fanout-rate and fanout-window above 0, fanout-step-window not below 0")
	}
	n, err := startNetwork(e)
	if err != nil {
		return err
	}
	defer n.stop()
	srvs, err := startServers(e, e.servers(), n.serverArgs()...)
	if err != nil {
		return err
	}
	defer srvs.stop()
	sess, err := srvs[0].linkSession(ctx, "fanout", fanoutAccount)
	if err != nil {
		return err
	}
	f := &fanout{e: e, net: n, srvs: srvs, sess: sess, next: 1, http: &http.Client{Timeout: time.Minute}}
	if len(srvs) > 1 {
		owners, err := srvs.waitSpread(ctx, []string{sess}, 2*time.Minute)
		if err != nil {
			return err
		}
		f.holder = -1
		for i := range srvs {
			if nodeID(i) == owners[sess] {
				f.holder = i
			}
		}
		e.progress("fan-out: session %s held by %s", sess, owners[sess])
	}
	e.progress("fan-out: session %s linked; opening %d subscribers over %d process(es)", sess, e.FanoutSubscribers, len(srvs))
	bases := make([]string, len(srvs))
	for i, s := range srvs {
		bases[i] = s.base
	}
	f.subs, err = dialSubscribers(ctx, bases, e.token, sess, e.FanoutSubscribers, fanoutSampleEvery)
	if err != nil {
		return err
	}
	defer func() { f.subs.close() }()
	if err := f.sync(ctx); err != nil {
		return err
	}

	rounds := make([]fanoutRound, e.Rounds)
	for i := range rounds {
		if err := f.ready(ctx); err != nil {
			return err
		}
		r, err := f.measure(ctx, e.FanoutRate, e.FanoutWindow)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		rounds[i] = r
		e.progress("round %d %s", i+1, r.line(e.FanoutSubscribers))
	}
	met := writeFanoutReport(out, rounds, e.Options)

	if (met && !e.FanoutCeiling) || e.FanoutStepWindow == 0 {
		return nil
	}
	var steps []fanoutRound
	for _, rate := range fanoutSteps {
		if err := f.ready(ctx); err != nil {
			return err
		}
		r, err := f.measure(ctx, rate, e.FanoutStepWindow)
		if err != nil {
			return fmt.Errorf("step %.0f/s: %w", rate, err)
		}
		steps = append(steps, r)
		e.progress("step %s", r.line(e.FanoutSubscribers))
		if !r.keptUp(e.FanoutSubscribers) {
			break
		}
	}
	writeFanoutSteps(out, steps, e.Options)
	return nil
}

// fanoutSteps are the rates of the step-up, texts per second.
var fanoutSteps = []float64{10, 20, 30, 40, 50, 60, 80, 100, 130, 160, 200, 250, 300}

// keptUp: the step delivered every text to every subscriber, in order, none
// cut off, and at least 90% of what was offered inside the window (the rest
// lands in the drain: a server that falls further behind each second has
// not kept up, even with nobody cut off yet).
func (r fanoutRound) keptUp(subscribers int) bool {
	return r.clean() && r.PerSecond() >= 0.9*r.Rate*float64(subscribers)
}

func (r fanoutRound) line(subscribers int) string {
	cluster := ""
	if len(r.ServerCPUs) > 1 {
		parts := make([]string, len(r.ServerCPUs))
		for i, c := range r.ServerCPUs {
			parts[i] = fmt.Sprintf("%.0f%%", cpuPercent(c, r.Window))
		}
		cluster = fmt.Sprintf("  per process CPU %s  p50/p99 on the holder %s/%s, elsewhere %s/%s", strings.Join(parts, " + "),
			r.HolderP50.Round(time.Millisecond), r.HolderP99.Round(time.Millisecond), r.RemoteP50.Round(time.Millisecond), r.RemoteP99.Round(time.Millisecond))
	}
	return fmt.Sprintf("%5.0f texts/s → %7.0f deliveries/s (offered %.0f)  cut %d gaps %d disorder %d behind %d  p50 %s p99 %s  server CPU %.0f%% RSS %.0f MiB  network CPU %.0f%%%s  load program CPU %.0f%%  load %s",
		r.Rate, r.PerSecond(), r.Rate*float64(subscribers), r.CutOff, r.Gaps, r.Disorder, r.Behind,
		r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond),
		cpuPercent(r.ServerCPU, r.Window), float64(r.ServerRSS)/(1<<20), cpuPercent(r.NetworkCPU, r.Window), dbPart(r.DBCPU > 0, cpuPercent(r.DBCPU, r.Window), "CPU %.0f%%"),
		cpuPercent(r.SelfCPU, r.Window), r.Load) + cluster
}

func cpuPercent(cpu, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return 100 * cpu.Seconds() / window.Seconds()
}

// send asks the network to send count texts to the session's account, the
// next numbers of the run.
func (f *fanout) send(ctx context.Context, count int) error {
	body, err := json.Marshal(map[string]any{"from": fanoutContact, "to": fanoutAccount + "@s.whatsapp.net",
		"count": count, "prefix": fanoutPrefix(f.next, time.Now())})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+f.net.control+"/v1/send-burst", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := f.http.Do(req)
	if err != nil {
		return fmt.Errorf("send-burst: %w", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var q struct{ Queued int }
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &q) != nil || q.Queued != count {
		return fmt.Errorf("send-burst of %d: HTTP %d %.300s", count, res.StatusCode, b)
	}
	f.next += int64(count)
	return nil
}

// sync sends single texts until every subscriber has received one (a
// subscription starts live once the server registered it, which the client
// is not told), so that a window starts with every subscriber following and
// nothing left over from the window before: the first text waits behind
// whatever the server has not delivered yet, up to fanoutBacklog.
func (f *fanout) sync(ctx context.Context) error {
	limit := fanoutBacklog
	for range 20 {
		if err := f.send(ctx, 1); err != nil {
			return err
		}
		behind, err := f.subs.waitCaughtUp(ctx, f.next-1, limit)
		if err != nil {
			return err
		}
		if behind == 0 {
			return nil
		}
		limit = 3 * time.Second
	}
	return fmt.Errorf("subscribers not following after 20 texts")
}

// ready prepares a window: every subscriber following (those cut off
// before replaced) and nothing left over from the window before.
func (f *fanout) ready(ctx context.Context) error {
	cut := 0
	for i, s := range f.subs.list {
		if s.snapshot().cut == "" {
			continue
		}
		cut++
		s.close()
		ns, err := dialSubscriber(ctx, s.base, f.e.token, f.sess, s.sample, s.server)
		if err != nil {
			return fmt.Errorf("subscriber %d again: %w", i, err)
		}
		f.subs.list[i] = ns
		f.subs.wg.Add(1)
		go func() {
			defer f.subs.wg.Done()
			ns.read()
		}()
	}
	if cut > 0 {
		f.e.progress("fan-out: %d subscribers cut off before: subscribed again", cut)
	}
	return f.sync(ctx)
}

// measure sends texts at rate for window, then waits for the subscribers
// to receive the last one, and returns the window's figures.
func (f *fanout) measure(ctx context.Context, rate float64, window time.Duration) (fanoutRound, error) {
	r := fanoutRound{Rate: rate}
	for _, s := range f.subs.list {
		s.takeLatencies() // the sync's
	}
	before := f.subs.snapshots()
	cpu0, err := f.cpus()
	if err != nil {
		return r, err
	}
	first := f.next
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		elapsed := time.Since(start)
		if elapsed >= window {
			break
		}
		if due := int64(rate*elapsed.Seconds()) + 1 - (f.next - first); due > 0 {
			if err := f.send(ctx, int(min(due, 10_000))); err != nil {
				return r, err
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	after := f.subs.snapshots()
	r.Window = time.Since(start)
	cpu1, err := f.cpus()
	if err != nil {
		return r, err
	}
	r.NetworkCPU, r.SelfCPU, r.DBCPU = cpu1.network-cpu0.network, cpu1.self-cpu0.self, cpu1.db-cpu0.db
	for i := range cpu1.servers {
		d := cpu1.servers[i] - cpu0.servers[i]
		r.ServerCPUs = append(r.ServerCPUs, d)
		r.ServerCPU += d
	}
	if rss, err := f.srvs.rss(); err == nil {
		r.ServerRSS = rss
	}
	r.Load = loadAverage()
	r.Sent = f.next - first
	for i := range after {
		r.Deliveries += after[i].received - before[i].received
	}

	if r.Behind, err = f.subs.waitCaughtUp(ctx, f.next-1, fanoutDrain); err != nil {
		return r, err
	}
	var lat, holderLat, remoteLat []time.Duration
	for i, s := range f.subs.list {
		t := s.snapshot()
		if t.cut != "" {
			r.CutOff++
			if r.CutOff == 1 {
				f.e.progress("fan-out: subscriber %d cut off: %s", i, t.cut)
			}
		}
		r.Gaps += t.gaps - before[i].gaps
		r.Disorder += t.disorder - before[i].disorder
		l := s.takeLatencies()
		lat = append(lat, l...)
		if s.server == f.holder {
			holderLat = append(holderLat, l...)
		} else {
			remoteLat = append(remoteLat, l...)
		}
	}
	slices.Sort(lat)
	r.P50, r.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if len(f.srvs) > 1 {
		slices.Sort(holderLat)
		slices.Sort(remoteLat)
		r.HolderP50, r.HolderP99 = percentile(holderLat, 0.50), percentile(holderLat, 0.99)
		r.RemoteP50, r.RemoteP99 = percentile(remoteLat, 0.50), percentile(remoteLat, 0.99)
	}
	if r.CutOff == len(f.subs.list) {
		return r, errNoSubscriber
	}
	return r, nil
}

// cpus are the CPU times of the servers, the network and this program.
func (f *fanout) cpus() (cpuReading, error) {
	var c cpuReading
	var err error
	if c.servers, err = f.srvs.cpus(); err != nil {
		return c, err
	}
	if c.network, err = f.net.cpu(); err != nil {
		return c, err
	}
	if c.self, err = processCPU(os.Getpid()); err != nil || f.e.dbCPU == nil {
		return c, err
	}
	c.db, err = f.e.dbCPU()
	return c, err
}
