//go:build unix

package crashtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/natstest"
)

// The event stream on NATS JetStream (issue 36, must show 2;
// integrations.md §2) with wagraph as processes: 10 linked sessions, each
// with a webhook, 2,000 inbound texts (200 a session, all at once), and
// the NATS server stopped for 20 s when a third of them is in.
const (
	jsSessions   = 10
	jsPerSession = 200 // texts to each session
	jsTexts      = jsPerSession * jsSessions
	jsPrefix     = "js-"
	jsOutage     = 20 * time.Second
	jsOutageMax  = time.Minute // the outage's end when the texts are still arriving
	jsStream     = "WAGRAPH"   // the default --nats-stream
	jsCatchUp    = 30 * time.Second
	jsPublished  = "wagraph_nats_published_total"
	jsFailures   = "wagraph_nats_publish_failures_total"
	jsLag        = "wagraph_nats_lag_events"
	jsPhoneRange = "49155566"
)

func jsAccount(i int) string { return fmt.Sprintf("%s%05d", jsPhoneRange, i+1) }
func jsContact(i int) string { return fmt.Sprintf("%s%05d", jsPhoneRange, 500+i) }

// TestNATSStreamOutage: every stored event of 10 sessions is in the
// stream once (by Nats-Msg-Id), in seq order per session, a text's body
// byte for byte the webhook's, though the NATS server was stopped for 20 s
// in the middle of 2,000 inbound texts and started again; meanwhile the
// webhooks kept their latency, the texts were stored at their pace and
// /readyz answered 200. On SQLite one process; on PostgreSQL two, each
// publishing the sessions it holds. The servers are wagraph built without
// the race detector: the latencies are the product's figures (the
// publisher's concurrency is under the detector in internal/natsstream's
// tests, against the same real server).
func TestNATSStreamOutage(t *testing.T) {
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	control := cs.startNetwork()
	broker := natstest.Start(t)
	rv := &streamReceiver{bodies: map[string][]byte{}}
	hook := httptest.NewServer(rv)
	t.Cleanup(hook.Close)

	processes := 1
	if loc.URL != "" {
		processes = 2
	}
	servers := make([]*server, processes)
	for i := range servers {
		dataDir := loc.DataDir
		if i > 0 {
			dataDir = t.TempDir()
		}
		args := append(serveArgs(dataDir, control, loc.URL), "--nats-url", broker.URL, "--node-id", fmt.Sprintf("node-%d", i+1))
		servers[i] = startServer(t, cs.startPlain(fmt.Sprintf("node-%d", i+1), args...))
	}
	for _, s := range servers {
		s.ready(t)
	}
	linking := time.Now()
	ids := make([]string, jsSessions)
	for i := range ids {
		ids[i] = linkAccount(t, servers[i%processes], fmt.Sprintf("js%d", i), jsAccount(i), hook.URL+"/hook")
	}
	held := map[string]int{"node-1": jsSessions}
	if processes > 1 {
		held = waitHeld(t, servers[0], ids, processes)
	}
	t.Logf("%d sessions linked in %.1f s, held %v", jsSessions, time.Since(linking).Seconds(), held)

	// The burst, the broker stopped when a third of it is delivered: the
	// rest arrives while it is down.
	start := time.Now()
	burst := sendBursts(servers, ids, jsPrefix)
	servers[0].waitFor(t, "a third of the texts delivered", time.Minute, func() (bool, error) {
		return rv.texts() >= jsTexts/3, fmt.Errorf("%d delivered", rv.texts())
	})
	inStream, _ := natstest.Count(broker.URL, jsStream)
	broker.Stop()
	stopped := time.Now()
	t.Logf("NATS stopped %.1f s into the burst, with %d messages in the stream and %d texts delivered to the webhook",
		stopped.Sub(start).Seconds(), inStream, rv.texts())
	waitBursts(t, burst)
	var ready []readyzAnswer
	for _, s := range servers {
		ready = append(ready, s.pollReadyz(time.Second, nil)...)
	}
	// Down 20 s, and longer if the texts are still arriving (a slow
	// machine): every one must reach the webhook with the broker away.
	for time.Since(stopped) < jsOutageMax && rv.texts() < jsTexts {
		time.Sleep(50 * time.Millisecond)
	}
	allDelivered := time.Since(stopped)
	if rest := jsOutage - time.Since(stopped); rest > 0 {
		time.Sleep(rest)
	}
	if n := rv.texts(); n != jsTexts {
		t.Errorf("%d of %d texts delivered to the webhook in the %s NATS was down: a broker away must not hold the webhooks", n, jsTexts, jsOutageMax)
	} else {
		t.Logf("all %d texts delivered to the webhook %.1f s into the NATS outage", n, allDelivered.Seconds())
	}
	for _, a := range ready {
		if a.code != http.StatusOK {
			t.Errorf("/readyz during the NATS outage: %d %s (%v), want 200: readiness does not depend on the broker", a.code, a.body, a.err)
		}
	}
	lagDown := 0.0
	for _, s := range servers {
		lagDown += metricsOf(t, s)[jsLag]
	}
	broker.Run()
	back := time.Now()
	t.Logf("NATS down %.1f s; lag %v events when it came back", back.Sub(stopped).Seconds(), lagDown)
	if lagDown == 0 {
		t.Errorf("%s was 0 with the broker down after %d texts: the lag is not counted", jsLag, jsTexts)
	}

	// Webhook latency (delivery − the envelope's timestamp, when the log
	// took the event) and the storing pace, before and during the outage.
	before, during := rv.latencies(stopped, back)
	t.Logf("webhook latency with NATS up (the texts stored before the stop): %s", before)
	t.Logf("webhook latency with NATS down (the texts stored during the outage): %s", during)
	if during.n < jsTexts/10 || before.n < jsTexts/10 {
		t.Fatalf("too few deliveries to compare (%d before, %d during): the bursts did not overlap the run as planned", before.n, during.n)
	}
	// The bounds leave room for a shared machine's contention, which
	// moves the tail most; a webhook waiting on the broker would wait
	// for the publisher's 5 s timeout or for good.
	if limit := 2*before.p50 + 500*time.Millisecond; during.p50 > limit {
		t.Errorf("webhook p50 latency %s while NATS was down, %s before: want at most %s (a broker away never slows webhooks)", during.p50, before.p50, limit)
	}
	if limit := 2*before.p95 + 2*time.Second; during.p95 > limit {
		t.Errorf("webhook p95 latency %s while NATS was down, %s before: want at most %s (a broker away never slows webhooks)", during.p95, before.p95, limit)
	}
	rateUp, rateDown := rv.rates(stopped)
	t.Logf("texts stored per second: %.0f with NATS up, %.0f with NATS down", rateUp, rateDown)
	if rateDown < rateUp/3 {
		t.Errorf("%.0f texts stored a second with NATS down, %.0f with it up: a broker away must not slow storing", rateDown, rateUp)
	}

	// The log, session by session, and the stream caught up with it.
	logs := map[string][]loggedEvent{}
	total := 0
	for i, id := range ids {
		events, err := readLog(servers[i%processes], id)
		if err != nil {
			t.Fatal(err)
		}
		logs[id] = events
		total += len(events)
	}
	var caughtUp time.Duration
	servers[0].waitFor(t, fmt.Sprintf("the stream holding the %d events of the log", total), jsCatchUp, func() (bool, error) {
		n, err := natstest.Count(broker.URL, jsStream)
		caughtUp = time.Since(back)
		return n >= uint64(total), fmt.Errorf("%d in the stream: %v", n, err)
	})
	t.Logf("the stream holds the %d events of the log %.1f s after NATS came back", total, caughtUp.Seconds())
	checkStreamLog(t, natstest.Messages(t, broker.URL, jsStream), logs, rv)

	for _, s := range servers {
		s.waitFor(t, s.name+" lag 0", jsCatchUp, func() (bool, error) {
			m := metricsOf(t, s)
			return m[jsLag] == 0, fmt.Errorf("%s %v", jsLag, m[jsLag])
		})
		m := metricsOf(t, s)
		t.Logf("%s: %s %v, %s %v", s.name, jsPublished, m[jsPublished], jsFailures, m[jsFailures])
		if _, ok := m[jsFailures]; !ok {
			t.Errorf("%s: /metrics has no %s", s.name, jsFailures)
		}
		if m[jsPublished] == 0 {
			t.Errorf("%s published nothing: each process publishes the sessions it holds", s.name)
		}
	}
}

// linkAccount creates a session named name, links it as phone and gives
// it a webhook at hookURL for the inbound messages.
func linkAccount(t *testing.T, s *server, name, phone, hookURL string) string {
	t.Helper()
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.must(t, `mutation($n: String!) { createSession(name: $n) { session { id } } }`, map[string]any{"n": name}, &created)
	id := created.CreateSession.Session.ID
	s.must(t, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil)
	s.status(t, id, "PAIRING", time.Minute)
	var linked struct{ SandboxLinkDevice struct{ Status string } }
	s.must(t, `mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { status } }`,
		map[string]any{"id": id, "p": phone}, &linked)
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		t.Fatalf("session %s linked as %s", name, linked.SandboxLinkDevice.Status)
	}
	s.must(t, `mutation($id: ID!, $url: String!) {
		createWebhook(sessionId: $id, input: {url: $url, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } } }`,
		map[string]any{"id": id, "url": hookURL}, nil)
	return id
}

// waitHeld waits until every session is CONNECTED and the processes all
// hold some, and returns how many each holds.
func waitHeld(t *testing.T, via *server, ids []string, processes int) map[string]int {
	t.Helper()
	var counts map[string]int
	via.waitFor(t, "every session CONNECTED, held by every process", time.Minute, func() (bool, error) {
		var out struct {
			Sessions []struct{ ID, Status, Owner string }
		}
		if err := via.graphql(`{ sessions { id status owner } }`, nil, &out); err != nil {
			return false, err
		}
		counts = map[string]int{}
		connected := 0
		for _, s := range out.Sessions {
			if s.Status == "CONNECTED" && s.Owner != "" {
				connected++
				counts[s.Owner]++
			}
		}
		return connected == len(ids) && len(counts) == processes, fmt.Errorf("%d CONNECTED, held %v", connected, counts)
	})
	return counts
}

// sendBursts has the network send jsPerSession texts to every session at once
// (through the process at i%len(servers)); the answers come on the channel.
func sendBursts(servers []*server, ids []string, prefix string) chan error {
	done := make(chan error, len(ids))
	for i, id := range ids {
		go func() {
			var out struct{ SandboxSendBurst int }
			err := servers[i%len(servers)].graphql(`mutation($id: ID!, $f: String!, $n: Int!, $p: String!) { sandboxSendBurst(sessionId: $id, from: $f, count: $n, prefix: $p) }`,
				map[string]any{"id": id, "f": jsContact(i), "n": jsPerSession, "p": prefix}, &out)
			if err == nil && out.SandboxSendBurst != jsPerSession {
				err = fmt.Errorf("queued %d of %d", out.SandboxSendBurst, jsPerSession)
			}
			done <- err
		}()
	}
	return done
}

func waitBursts(t *testing.T, done chan error) {
	t.Helper()
	for range cap(done) {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sandboxSendBurst: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("sandboxSendBurst did not answer within a minute")
		}
	}
}

// streamReceiver is the webhook endpoint: the body of each event as
// delivered, and when each delivery came.
type streamReceiver struct {
	mu         sync.Mutex
	bodies     map[string][]byte // by event id: the first delivery's body
	deliveries []timedDelivery
	bad        []string
}

type timedDelivery struct {
	at     time.Time
	stored time.Time // the envelope's timestamp
	text   string
}

func (rv *streamReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var env envelope
	var msg messageData
	if err == nil {
		err = json.Unmarshal(body, &env)
	}
	if err == nil {
		err = json.Unmarshal(env.Data, &msg)
	}
	stored, terr := time.Parse(time.RFC3339Nano, env.Timestamp)
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if err != nil || terr != nil || r.Header.Get("webhook-id") != env.ID {
		rv.bad = append(rv.bad, fmt.Sprintf("%v %v webhook-id %q: %.200s", err, terr, r.Header.Get("webhook-id"), body))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if rv.bodies[env.ID] == nil {
		rv.bodies[env.ID] = body
		rv.deliveries = append(rv.deliveries, timedDelivery{at: at, stored: stored, text: msg.Text})
	}
	w.WriteHeader(http.StatusNoContent)
}

// texts is how many distinct events of the bursts were delivered.
func (rv *streamReceiver) texts() int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	n := 0
	for _, d := range rv.deliveries {
		if strings.HasPrefix(d.text, jsPrefix) {
			n++
		}
	}
	return n
}

// latency sums up delivery latencies.
type latency struct {
	n             int
	p50, p95, max time.Duration
}

func (l latency) String() string {
	return fmt.Sprintf("%d deliveries, p50 %s, p95 %s, max %s", l.n, l.p50.Round(time.Millisecond), l.p95.Round(time.Millisecond), l.max.Round(time.Millisecond))
}

func summarizeLatency(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	slices.Sort(ds)
	return latency{n: len(ds), p50: ds[len(ds)/2], p95: ds[len(ds)*95/100], max: ds[len(ds)-1]}
}

// latencies are those of the deliveries stored before stop, and of those
// stored while the broker was down (between stop and back).
func (rv *streamReceiver) latencies(stop, back time.Time) (before, during latency) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var b, d []time.Duration
	for _, x := range rv.deliveries {
		switch {
		case x.stored.Before(stop):
			b = append(b, x.at.Sub(x.stored))
		case x.stored.Before(back):
			d = append(d, x.at.Sub(x.stored))
		}
	}
	return summarizeLatency(b), summarizeLatency(d)
}

// rates are the texts stored per second before stop (from the first
// stored) and from stop (to the last stored), by the envelopes' timestamps.
func (rv *streamReceiver) rates(stop time.Time) (up, down float64) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var first, last time.Time
	var before, after int
	for _, d := range rv.deliveries {
		if !strings.HasPrefix(d.text, jsPrefix) {
			continue
		}
		if first.IsZero() || d.stored.Before(first) {
			first = d.stored
		}
		if d.stored.After(last) {
			last = d.stored
		}
		if d.stored.Before(stop) {
			before++
		} else {
			after++
		}
	}
	return float64(before) / stop.Sub(first).Seconds(), float64(after) / last.Sub(stop).Seconds()
}

// checkStreamLog holds the stream to the logs: every event of every log
// once (by Nats-Msg-Id), nothing twice, each session's in seq order, its
// subject and headers those of the event, and a text's body the bytes
// its webhook got.
func checkStreamLog(t *testing.T, msgs []natstest.Msg, logs map[string][]loggedEvent, rv *streamReceiver) {
	t.Helper()
	rv.mu.Lock()
	bodies := maps.Clone(rv.bodies) // redeliveries may still come in
	bad := slices.Clone(rv.bad)
	rv.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("%d webhook requests were not a signed envelope, first: %s", len(bad), bad[0])
	}
	seen := map[string]int{}
	last := map[string]int64{}
	compared := 0
	for _, m := range msgs {
		id := m.Header.Get(jetstream.MsgIDHeader)
		seen[id]++
		var env envelope
		if err := json.Unmarshal(m.Data, &env); err != nil {
			t.Errorf("stream seq %d: body is no envelope: %v", m.Seq, err)
			continue
		}
		if env.ID != id {
			t.Errorf("stream seq %d: Nats-Msg-Id %q, body's id %q", m.Seq, id, env.ID)
		}
		if env.Seq <= last[env.SessionID] {
			t.Errorf("session %s: seq %d after seq %d in the stream, want seq order", env.SessionID, env.Seq, last[env.SessionID])
		}
		last[env.SessionID] = env.Seq
		if want := "wagraph.events." + env.SessionID + "." + env.Event; m.Subject != want {
			t.Errorf("event %s: subject %q, want %q", id, m.Subject, want)
		}
		if m.Header.Get("Wagraph-Session") != env.SessionID || m.Header.Get("Wagraph-Seq") != strconv.FormatInt(env.Seq, 10) || m.Header.Get("Wagraph-Event") != env.Event {
			t.Errorf("event %s: headers %v, want its session, seq and kind", id, m.Header)
		}
		if b, ok := bodies[id]; ok {
			compared++
			if string(b) != string(m.Data) {
				t.Errorf("event %s: stream body %s, webhook body %s: want the same bytes", id, m.Data, b)
			}
		}
	}
	twice, missing := 0, 0
	for id, n := range seen {
		if n > 1 {
			twice++
			if twice <= 5 {
				t.Errorf("event %s is in the stream %d times, want once", id, n)
			}
		}
	}
	for sessionID, events := range logs {
		for _, e := range events {
			if seen[e.ID] == 0 {
				missing++
				if missing <= 5 {
					t.Errorf("event %s (session %s seq %d, %s) is not in the stream", e.ID, sessionID, e.Seq, e.Kind)
				}
			}
		}
	}
	texts := jsTexts
	if compared < texts {
		t.Errorf("%d stream bodies compared with the webhook's, want the %d texts", compared, texts)
	}
	t.Logf("stream: %d messages, %d events twice, %d of the log's missing, %d bodies equal to the webhook's", len(msgs), twice, missing, compared)
}

// metricsOf reads the NATS families off a server's /metrics (an admin's
// token reads it).
func metricsOf(t *testing.T, s *server) map[string]float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && strings.HasPrefix(name, "wagraph_nats_") {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				t.Fatalf("/metrics: %s: %v", sc.Text(), err)
			}
			out[name] = v
		}
	}
	return out
}
