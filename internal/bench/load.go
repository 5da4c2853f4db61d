package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// target is one thing the load is put on: a request and the process that
// answers it.
type target struct {
	name string
	// request makes a new request (each worker sends its own).
	request func(ctx context.Context) (*http.Request, error)
	// want is the body every answer must have; an answer with another
	// body or status is counted as an error.
	want []byte
	// cpu reads the serving process's CPU time.
	cpu func() (time.Duration, error)
}

// measurement is one target's figures in one round.
type measurement struct {
	Requests int           // completed inside the measured window, with the expected answer
	Errors   int           // other answers and transport failures inside the window
	Window   time.Duration // the measured window (after the warm-up)
	P50, P99 time.Duration
	CPU      time.Duration // the server's CPU time in the window
}

// PerSecond is the requests answered each second of the window.
func (m measurement) PerSecond() float64 {
	if m.Window <= 0 {
		return 0
	}
	return float64(m.Requests) / m.Window.Seconds()
}

// CPUPerRequest is the server's CPU time for each request answered.
func (m measurement) CPUPerRequest() time.Duration {
	if m.Requests == 0 {
		return 0
	}
	return m.CPU / time.Duration(m.Requests)
}

// loadOptions shape one measurement.
type loadOptions struct {
	Conns    int
	Warmup   time.Duration
	Duration time.Duration
}

// newClient is the load's one HTTP client: conns keep-alive connections to
// one host, no more, all kept idle between requests.
func newClient(conns int) *http.Client {
	tr := &http.Transport{
		MaxConnsPerHost:     conns,
		MaxIdleConnsPerHost: conns,
		MaxIdleConns:        conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// sample is one request: when it ended and how long it took.
type sample struct {
	end time.Time
	lat time.Duration
	ok  bool
}

// measure puts a closed loop of opts.Conns concurrent workers on t (each
// sends its next request when its previous one is answered), for the
// warm-up and then the measured window; only requests that end inside the
// window count, and the server's CPU time is read at the window's two
// ends.
func measure(ctx context.Context, client *http.Client, t target, opts loadOptions) (measurement, error) {
	start := time.Now()
	from := start.Add(opts.Warmup)
	to := from.Add(opts.Duration)
	ctx, cancel := context.WithDeadline(ctx, to.Add(time.Second))
	defer cancel()

	samples := make([][]sample, opts.Conns)
	var wg sync.WaitGroup
	for w := range opts.Conns {
		wg.Go(func() {
			samples[w] = work(ctx, client, t, to)
		})
	}
	var cpuFrom, cpuTo time.Duration
	var cpuErr error
	sleepUntil(ctx, from)
	cpuFrom, cpuErr = t.cpu()
	sleepUntil(ctx, to)
	if cpuErr == nil {
		cpuTo, cpuErr = t.cpu()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil && time.Now().Before(to) {
		return measurement{}, err
	}
	if cpuErr != nil {
		return measurement{}, cpuErr
	}
	m := measurement{Window: to.Sub(from), CPU: cpuTo - cpuFrom}
	var lats []time.Duration
	for _, ws := range samples {
		for _, s := range ws {
			if s.end.Before(from) || s.end.After(to) {
				continue
			}
			if !s.ok {
				m.Errors++
				continue
			}
			m.Requests++
			lats = append(lats, s.lat)
		}
	}
	slices.Sort(lats)
	m.P50, m.P99 = percentile(lats, 0.50), percentile(lats, 0.99)
	return m, nil
}

// work is one worker of the closed loop: it sends requests one after the
// other until to.
func work(ctx context.Context, client *http.Client, t target, to time.Time) []sample {
	out := make([]sample, 0, 4096)
	buf := new(bytes.Buffer)
	for ctx.Err() == nil {
		begin := time.Now()
		if begin.After(to) {
			break
		}
		ok := do(ctx, client, t, buf)
		end := time.Now()
		out = append(out, sample{end: end, lat: end.Sub(begin), ok: ok})
	}
	return out
}

// do sends one request and reads its whole answer; the answer is right
// when it is 200 with the expected body.
func do(ctx context.Context, client *http.Client, t target, buf *bytes.Buffer) bool {
	req, err := t.request(ctx)
	if err != nil {
		return false
	}
	res, err := client.Do(req)
	if err != nil {
		return false
	}
	buf.Reset()
	_, err = buf.ReadFrom(io.LimitReader(res.Body, 16<<20))
	res.Body.Close()
	return err == nil && res.StatusCode == http.StatusOK && bytes.Equal(buf.Bytes(), t.want)
}

func sleepUntil(ctx context.Context, at time.Time) {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p*float64(len(sorted)) + 0.999999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// fetch answers one request of t outside any measurement: the body every
// answer of the load must then have.
func fetch(ctx context.Context, client *http.Client, t target) ([]byte, error) {
	req, err := t.request(ctx)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d %.300s", t.name, res.StatusCode, b)
	}
	return b, nil
}
