package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// Options are the load program's settings.
type Options struct {
	Wagraph  string // the built wagraph binary
	Self     string // this program, re-executed as the reference server
	Rounds   int
	Conns    int
	Warmup   time.Duration
	Duration time.Duration
	// DebugAddr, when set, is wagraph's --debug-addr: profile it while
	// the load runs.
	DebugAddr string
	// Progress, when set, gets a line for each measurement as it ends.
	Progress io.Writer
}

// graphqlViewer is the GraphQL target's body.
const graphqlViewer = `{"query":"{ viewer { user { id } } }"}`

// Run measures goal 1 of issue 11 (API overhead) and writes its table to
// out. The children run in a temporary directory removed at the end
// (their logs with it, unless Run fails: then the directory is kept and
// named in the error).
func Run(ctx context.Context, opts Options, out io.Writer) (err error) {
	if opts.Rounds < 1 || opts.Conns < 1 || opts.Duration <= 0 || opts.Warmup < 0 {
		return fmt.Errorf("rounds and conns must be at least 1 and the duration above 0")
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

	token, err := randomToken()
	if err != nil {
		return err
	}
	srv, err := startWagraph(opts.Wagraph, dir, token, opts.DebugAddr)
	if err != nil {
		return err
	}
	defer srv.stop()
	restBody, err := srv.prepare(ctx)
	if err != nil {
		return err
	}
	bare, bareBase, err := startBare(opts.Self, dir, restBody)
	if err != nil {
		return err
	}
	defer bare.stop()

	client := newClient(opts.Conns)
	defer client.CloseIdleConnections()
	targets := []target{
		{name: "bare", cpu: bare.cpu, want: restBody, request: func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, bareBase+"/api/v1/session/"+srv.session+"/webhook", nil)
		}},
		{name: "REST", cpu: srv.cpu, want: restBody, request: srv.restRequest},
		{name: "GraphQL", cpu: srv.cpu, request: func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/graphql", strings.NewReader(graphqlViewer))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			return req, nil
		}},
	}
	// The GraphQL answer does not change between requests: the first one is
	// what every other must be.
	if targets[2].want, err = fetch(ctx, client, targets[2]); err != nil {
		return err
	}
	if got, err := fetch(ctx, client, targets[0]); err != nil {
		return err
	} else if string(got) != string(restBody) {
		return fmt.Errorf("the reference answers %q, not the REST bytes", got)
	}

	lopts := loadOptions{Conns: opts.Conns, Warmup: opts.Warmup, Duration: opts.Duration}
	rounds := make([]round, opts.Rounds)
	for r := range rounds {
		rounds[r].by = map[string]measurement{}
		// Each round starts with another target, so that none is always
		// measured right after the same one.
		for i := range targets {
			t := targets[(r+i)%len(targets)]
			m, err := measure(ctx, client, t, lopts)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, t.name, err)
			}
			rounds[r].by[t.name] = m
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "round %d %-8s %9.0f req/s  p50 %-9s p99 %-9s %6.1f µs CPU/req  %d errors\n",
					r+1, t.name, m.PerSecond(), m.P50.Round(time.Microsecond), m.P99.Round(time.Microsecond),
					float64(m.CPUPerRequest().Nanoseconds())/1e3, m.Errors)
			}
		}
	}
	return writeReport(out, rounds, opts)
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	return "bench-" + hex.EncodeToString(b), nil
}
