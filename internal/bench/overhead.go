package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// graphqlViewer is the GraphQL target's body.
const graphqlViewer = `{"query":"{ viewer { user { id } } }"}`

// runOverhead measures goal 1 (API overhead): REST and GraphQL against a
// bare net/http handler answering the REST bytes, in interleaved rounds.
func runOverhead(ctx context.Context, e *env, out io.Writer) error {
	srv, err := startWagraph(e, "--sandbox")
	if err != nil {
		return err
	}
	defer srv.stop()
	restBody, err := srv.prepare(ctx)
	if err != nil {
		return err
	}
	bare, bareBase, err := startBare(e.Self, e.dir, restBody)
	if err != nil {
		return err
	}
	defer bare.stop()

	client := newClient(e.Conns)
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
			req.Header.Set("Authorization", "Bearer "+e.token)
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

	lopts := loadOptions{Conns: e.Conns, Warmup: e.Warmup, Duration: e.Duration}
	rounds := make([]round, e.Rounds)
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
			if e.Progress != nil {
				fmt.Fprintf(e.Progress, "round %d %-8s %9.0f req/s  p50 %-9s p99 %-9s %6.1f µs CPU/req  %d errors\n",
					r+1, t.name, m.PerSecond(), m.P50.Round(time.Microsecond), m.P99.Round(time.Microsecond),
					float64(m.CPUPerRequest().Nanoseconds())/1e3, m.Errors)
			}
		}
	}
	return writeReport(out, rounds, e.Options)
}
