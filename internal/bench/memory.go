package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Goal 5 of issue 11.
const (
	goalSessionRSS = 0.25             // MiB of RSS per connected idle session
	goalStartup    = 10 * time.Second // from process start to every session CONNECTED
	goalSessions   = 1000             // the sessions both figures are set at
)

// memorySettle is when a server counts as idle: five RSS samples a second
// apart within 1% of each other, and at most 5% of a core used between
// them (the post-login work — prekeys, app state, presence — is over).
var memorySettle = settleRule{Window: 5, Tolerance: 0.01, MaxCPU: 0.05}

const (
	settleInterval = time.Second
	settleLimit    = 2 * time.Minute
)

// idleFigures are the figures of one settled server.
type idleFigures struct {
	mem        memory  // the server's
	heapInuse  float64 // go_memstats_heap_inuse_bytes
	sys        float64 // go_memstats_sys_bytes
	goroutines float64 // go_goroutines
	settled    bool    // false: settleLimit passed first; the figures are the last samples
	took       time.Duration
}

// runMemory measures goal 5: the RSS of a server holding e.Sessions linked
// idle sessions against the same server's with none, and the time from
// the server's start to every session CONNECTED, over e.Restarts restarts.
func runMemory(ctx context.Context, e *env, out io.Writer) error {
	if e.Sessions < 1 || e.Restarts < 1 || e.LinkParallel < 1 {
		return fmt.Errorf("sessions, restarts and link-parallel must be at least 1")
	}
	net, err := startNetwork(e)
	if err != nil {
		return err
	}
	defer net.stop()
	netCPU0, err := net.cpu()
	if err != nil {
		return err
	}
	r := memoryRun{sessions: e.Sessions}

	// The reference: a server of the same binary and flags with no session,
	// measured again at each restart (its own data directory), so that each
	// per-session figure is a difference taken within seconds.
	refIdx := 0
	reference := func() (idleFigures, error) {
		refIdx++
		re := *e
		re.dir = filepath.Join(e.dir, fmt.Sprintf("empty-%d", refIdx))
		re.DebugAddr = ""
		if err := os.Mkdir(re.dir, 0o700); err != nil {
			return idleFigures{}, err
		}
		if e.dbs != nil { // an empty database: the goal's holds the sessions
			var err error
			if re.dbURL, err = e.dbs.create(ctx, fmt.Sprintf("memory_empty_%d", refIdx)); err != nil {
				return idleFigures{}, err
			}
		}
		srv, err := startWagraph(&re, net.serverArgs()...)
		if err != nil {
			return idleFigures{}, fmt.Errorf("empty server: %w", err)
		}
		defer srv.stop()
		f, err := settle(ctx, srv)
		e.progress("empty server: RSS %.1f MiB, heap %.1f MiB, %0.f goroutines (settled %v in %s)",
			mib(f.mem.RSS), f.heapInuse/(1<<20), f.goroutines, f.settled, f.took.Round(time.Second))
		return f, err
	}
	ref0, err := reference()
	if err != nil {
		return err
	}

	srv, err := startWagraph(e, net.serverArgs()...)
	if err != nil {
		return err
	}
	defer func() {
		if srv != nil { // a failed restart leaves none
			srv.stop()
		}
	}()
	start := time.Now()
	if err := linkSessions(ctx, e, srv); err != nil {
		return err
	}
	r.linkTook = time.Since(start)
	if err := srv.waitConnected(ctx, e.Sessions, settleLimit); err != nil {
		return err
	}
	linked, err := settle(ctx, srv)
	if err != nil {
		return err
	}
	r.rounds = append(r.rounds, memoryRound{ref: ref0, held: linked})
	e.progress("%d sessions linked in %s: RSS %.1f MiB, %.3f MiB/session over the empty server (settled %v)",
		e.Sessions, r.linkTook.Round(time.Second), mib(linked.mem.RSS), r.rounds[0].perSession(e.Sessions), linked.settled)

	for i := 1; i <= e.Restarts; i++ {
		ref, err := reference()
		if err != nil {
			return err
		}
		stopAt := time.Now()
		srv.stop()
		stopTook := time.Since(stopAt)
		if err := keepLog(e.dir, i); err != nil {
			return err
		}
		netAt, err := net.cpu()
		if err != nil {
			return err
		}
		startAt := time.Now()
		srv, err = startWagraph(e, net.serverArgs()...)
		if err != nil {
			return fmt.Errorf("restart %d: %w", i, err)
		}
		if err := srv.waitConnected(ctx, e.Sessions, time.Minute); err != nil {
			return fmt.Errorf("restart %d: %w", i, err)
		}
		startup := time.Since(startAt)
		srvCPU, err := srv.cpu()
		if err != nil {
			return err
		}
		netCPU, err := net.cpu()
		if err != nil {
			return err
		}
		held, err := settle(ctx, srv)
		if err != nil {
			return fmt.Errorf("restart %d: %w", i, err)
		}
		m := memoryRound{ref: ref, held: held, stop: stopTook, startup: startup, startupCPU: srvCPU, startupNetCPU: netCPU - netAt}
		r.rounds = append(r.rounds, m)
		e.progress("restart %d: stopped in %s, all %d CONNECTED %s after start; RSS %.1f MiB, %.3f MiB/session (settled %v)",
			i, stopTook.Round(time.Millisecond), e.Sessions, startup.Round(time.Millisecond), mib(held.mem.RSS), m.perSession(e.Sessions), held.settled)
	}

	if r.netMem, err = processMemory(net.cmd.Process.Pid); err != nil {
		return err
	}
	netCPU, err := net.cpu()
	if err != nil {
		return err
	}
	r.netCPU = netCPU - netCPU0
	if r.netLog, err = logLevelsOf(net.log); err != nil {
		return err
	}
	for i := 0; i <= e.Restarts; i++ {
		name := filepath.Join(e.dir, fmt.Sprintf("wagraph-%d.log", i))
		if i == e.Restarts {
			name = srv.log
		}
		c, err := logLevelsOf(name)
		if err != nil {
			return err
		}
		r.serverLog.warn += c.warn
		r.serverLog.error += c.error
	}
	r.load = loadAverage()
	r.write(out, e.Options)
	return nil
}

// linkSessions links e.Sessions sessions to the network, e.LinkParallel at
// once, each to its own phone number.
func linkSessions(ctx context.Context, e *env, srv *wagraphServer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		once       sync.Once
		first      error
	)
	for range e.LinkParallel {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > e.Sessions || ctx.Err() != nil {
					return
				}
				if _, err := srv.linkSession(ctx, fmt.Sprintf("mem-%d", i), sessionPhone(i)); err != nil {
					once.Do(func() { first = fmt.Errorf("link session %d: %w", i, err); cancel() })
					return
				}
				if n := done.Add(1); n%100 == 0 {
					e.progress("linked %d/%d", n, e.Sessions)
				}
			}
		})
	}
	wg.Wait()
	return first
}

// sessionPhone is the phone number of the i-th session's account: 12
// digits, distinct for every i below 10⁷.
func sessionPhone(i int) string { return fmt.Sprintf("49151%07d", i) }

// keepLog moves the stopped server's log aside: the next start writes
// wagraph.log anew.
func keepLog(dir string, i int) error {
	return os.Rename(filepath.Join(dir, "wagraph.log"), filepath.Join(dir, fmt.Sprintf("wagraph-%d.log", i-1)))
}

// metrics reads the server's /metrics with the admin token.
func (s *wagraphServer) metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: HTTP %d %.200s", res.StatusCode, b)
	}
	return string(b), nil
}

// waitConnected polls /metrics until n sessions are CONNECTED.
func (s *wagraphServer) waitConnected(ctx context.Context, n int, limit time.Duration) error {
	return s.waitFor(fmt.Sprintf("%d sessions CONNECTED", n), limit, func() (bool, error) {
		text, err := s.metrics(ctx)
		if err != nil {
			return false, err
		}
		v, _, err := metricValue(text, "wagraph_sessions", `status="CONNECTED"`)
		if err != nil {
			return false, err
		}
		return int(v) >= n, fmt.Errorf("%.0f CONNECTED", v)
	})
}

// settle samples the server every settleInterval until memorySettle holds
// (or settleLimit passes: the figures are then the last ones, marked
// unsettled), and returns its figures then.
func settle(ctx context.Context, s *wagraphServer) (idleFigures, error) {
	start := time.Now()
	var samples []settleSample
	prevCPU, err := s.cpu()
	if err != nil {
		return idleFigures{}, err
	}
	prevAt := time.Now()
	var f idleFigures
	for {
		if f.mem, err = processMemory(s.cmd.Process.Pid); err != nil {
			return idleFigures{}, err
		}
		cpu, err := s.cpu()
		if err != nil {
			return idleFigures{}, err
		}
		now := time.Now()
		samples = append(samples, settleSample{RSS: f.mem.RSS, CPU: float64(cpu-prevCPU) / float64(now.Sub(prevAt))})
		prevCPU, prevAt = cpu, now
		f.settled = memorySettle.settled(samples)
		if f.settled || time.Since(start) > settleLimit {
			break
		}
		select {
		case <-ctx.Done():
			return idleFigures{}, ctx.Err()
		case <-s.done:
			return idleFigures{}, fmt.Errorf("settle: %s ended (%v); its log: %s", s.name, s.err, s.log)
		case <-time.After(settleInterval):
		}
	}
	f.took = time.Since(start)
	text, err := s.metrics(ctx)
	if err != nil {
		return idleFigures{}, err
	}
	for _, m := range []struct {
		name string
		dst  *float64
	}{{"go_memstats_heap_inuse_bytes", &f.heapInuse}, {"go_memstats_sys_bytes", &f.sys}, {"go_goroutines", &f.goroutines}} {
		v, found, err := metricValue(text, m.name)
		if err != nil {
			return idleFigures{}, err
		}
		if !found {
			return idleFigures{}, fmt.Errorf("/metrics has no %s", m.name)
		}
		*m.dst = v
	}
	return f, nil
}

// logLevels counts a log's warnings and errors.
type logLevels struct{ warn, error int }

func logLevelsOf(path string) (logLevels, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return logLevels{}, err
	}
	return countLogLevels(string(b)), nil
}

// countLogLevels counts the WARN and ERROR lines of a slog log: JSON lines
// by their "level" field, text lines by their level=… field.
func countLogLevels(log string) logLevels {
	var c logLevels
	for line := range strings.Lines(log) {
		var level string
		if strings.HasPrefix(line, "{") {
			var rec struct{ Level string }
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			level = rec.Level
		} else {
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "level="); ok {
					level = v
					break
				}
			}
		}
		switch level {
		case "ERROR":
			c.error++
		case "WARN":
			c.warn++
		}
	}
	return c
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
