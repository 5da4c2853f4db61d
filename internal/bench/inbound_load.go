package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The machinery of goals 3 and 6: a webhook receiver served by the load
// program, linked sessions each with a webhook pointing at it, and an
// open-loop sender asking the network process (its control API, not the
// server: the server's CPU stays on the work measured) to send texts to
// those sessions.

// receiver is the webhook receiver on loopback: it answers 200 at once and
// reports each delivery's text to the tracker of the moment.
type receiver struct {
	srv   *http.Server
	ln    net.Listener
	url   string
	track atomic.Pointer[tracker]
	bad   atomic.Int64 // bodies that are not an inbound text
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &receiver{ln: ln, url: "http://" + ln.Addr().String() + "/hook"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln) //nolint:errcheck // ends with close
	return r, nil
}

// webhookBody is the part of an inbound-message.upsert envelope the
// receiver reads.
type webhookBody struct {
	Event string `json:"event"`
	Data  struct {
		Text string `json:"text"`
	} `json:"data"`
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	var body webhookBody
	err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&body)
	w.WriteHeader(http.StatusOK)
	if err != nil || body.Event != "inbound-message.upsert" {
		r.bad.Add(1)
		return
	}
	if t := r.track.Load(); t != nil {
		t.arrived(body.Data.Text, at)
	}
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// inboundSession is a linked session: its account's phone, and the
// contact that writes to it.
type inboundSession struct {
	id, phone, contact string
}

// inboundContact is the contact that writes to wagraph's session i (and
// to raw client i).
func inboundContact(i int) string { return fmt.Sprintf("491519%05d1", i) }

// linkInbound links n sessions (8 at a time) to accounts of the network,
// each with a webhook of inbound messages pointing at url.
func linkInbound(ctx context.Context, s *wagraphServer, n int, url string) ([]inboundSession, error) {
	out := make([]inboundSession, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		// Numbers ending in 1: the network refuses those ending in 0000.
		out[i] = inboundSession{phone: fmt.Sprintf("491701%05d1", i), contact: inboundContact(i)}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			id, err := s.linkSession(ctx, fmt.Sprintf("inbound-%d", i), out[i].phone)
			if err != nil {
				errs[i] = fmt.Errorf("session %d: %w", i, err)
				return
			}
			out[i].id = id
			if err := s.graphql(ctx, `mutation($id: ID!, $url: String!) {
				createWebhook(sessionId: $id, input: {url: $url, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } } }`,
				map[string]any{"id": id, "url": url}, nil); err != nil {
				errs[i] = fmt.Errorf("session %d: createWebhook: %w", i, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// burstClient asks the network's control API for bursts.
type burstClient struct {
	url  string // …/v1/send-burst
	http *http.Client
}

func newBurstClient(control string) *burstClient {
	return &burstClient{url: "http://" + control + "/v1/send-burst", http: newClient(64)}
}

// send has the contact of s send count texts prefix1..prefixN to s's
// account, each with a message secret when secrets is set, and returns
// how many the network queued.
func (c *burstClient) send(ctx context.Context, s inboundSession, count int, prefix string, secrets bool) (int, error) {
	body, err := json.Marshal(map[string]any{"from": s.contact, "to": s.phone + "@s.whatsapp.net", "count": count, "prefix": prefix, "secrets": secrets})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	var out struct{ Queued int }
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
		return 0, fmt.Errorf("send-burst: HTTP %d %.300s", res.StatusCode, strings.TrimSpace(string(b)))
	}
	return out.Queued, nil
}

// offerOptions shape an open-loop offered load.
type offerOptions struct {
	Rate  int // texts per second, over all sessions
	Burst int // texts per control request (to one session)
	// Tick is how often the texts due are asked for.
	Tick time.Duration
	// Secrets gives each text a message secret, as phones do now.
	Secrets bool
}

// offer sends texts at opts.Rate from t.from to t.to, open loop: every tick
// the texts due since the start are asked for in requests of opts.Burst
// texts, each to the next session in turn, without waiting for earlier
// requests to be answered. A batch's send time is when it was due (the
// tick), so a sender or network that falls behind shows as latency, not as
// a lower offered rate. It returns once every request is answered, with
// the first error of a request, if any: the texts of a failed request are
// counted as failed sends (tally.Failed) and the load goes on.
func offer(ctx context.Context, c *burstClient, sessions []inboundSession, t *tracker, opts offerOptions) error {
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	defer wg.Wait()
	sleepUntil(ctx, t.from)
	ticker := time.NewTicker(opts.Tick)
	defer ticker.Stop()
	issued, next := 0, 0
	for now := t.from; ctx.Err() == nil; now = <-ticker.C {
		if now.After(t.to) {
			now = t.to
		}
		due := int(float64(opts.Rate) * now.Sub(t.from).Seconds())
		for due > issued {
			count := min(opts.Burst, due-issued)
			issued += count
			s := sessions[next%len(sessions)]
			next++
			index, prefix := t.batch(now, count)
			wg.Go(func() {
				n, err := c.send(ctx, s, count, prefix, opts.Secrets)
				t.queued(index, n)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("session %s: %w", s.id, err) })
				}
			})
		}
		if !now.Before(t.to) {
			break
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}

// drain waits until every text queued has arrived or limit passes.
func drain(ctx context.Context, t *tracker, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for t.outstanding() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		sleepUntil(ctx, time.Now().Add(50*time.Millisecond))
	}
}
