package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/webhook"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// deadReceiver is a webhook receiver that never takes a delivery: it
// answers 500, at once or (hang) only when the test ends.
type deadReceiver struct {
	*httptest.Server
	hits     atomic.Int64
	inFlight atomic.Int64
	arrived  chan struct{} // one token per request, dropped when full
}

func newDeadReceiver(t testing.TB, hang bool) *deadReceiver {
	t.Helper()
	quit := make(chan struct{})
	rc := &deadReceiver{arrived: make(chan struct{}, 64)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.hits.Add(1)
		select {
		case rc.arrived <- struct{}{}:
		default:
		}
		if hang {
			rc.inFlight.Add(1)
			defer rc.inFlight.Add(-1)
			select {
			case <-r.Context().Done():
			case <-quit:
			}
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	// Cleanups run last first: the held requests go, then the server
	// closes (it waits for them).
	t.Cleanup(rc.Close)
	t.Cleanup(func() { close(quit) })
	return rc
}

// await waits for n requests to have arrived; it fails the test after 30 s.
func (rc *deadReceiver) await(t testing.TB, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for range n {
		select {
		case <-rc.arrived:
		case <-timeout:
			t.Fatalf("the receiver got %d requests within 30 s, want %d", rc.hits.Load(), n)
		}
	}
}

// createWebhook registers a webhook of the session (kinds nil: every
// kind) and returns its id.
func createWebhook(t testing.TB, s *apptest.Server, sessionID, url string, kinds []string) string {
	t.Helper()
	in := map[string]any{"url": url}
	if kinds != nil {
		in["events"] = kinds
	}
	var out struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $in: WebhookInput!) { createWebhook(sessionId: $s, input: $in) { webhook { id } } }`,
		map[string]any{"s": sessionID, "in": in}, &out)
	return out.CreateWebhook.Webhook.ID
}

// lastSeq is the seq of the session's latest stored event (0: none).
func lastSeq(t testing.TB, s *apptest.Server, sessionID string) int64 {
	t.Helper()
	e, _, err := s.App.Bus().Log().Last(context.Background(), sessionID)
	if err != nil {
		t.Fatalf("last event of %s: %v", sessionID, err)
	}
	return e.Seq
}

// pendingDeliveries counts the PENDING deliveries among the newest 100 of
// a webhook.
func pendingDeliveries(t testing.TB, s *apptest.Server, sessionID, webhookID string) (pending int) {
	t.Helper()
	var out struct {
		Deliveries struct {
			Edges []struct {
				Node struct{ Status string }
			}
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w, first: 100) { edges { node { status } } } }`,
		map[string]any{"s": sessionID, "w": webhookID}, &out)
	for _, e := range out.Deliveries.Edges {
		if e.Node.Status == "PENDING" {
			pending++
		}
	}
	return pending
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

// probe sends a session texts from a contact, spaced out, and measures
// how long each takes from the network's send to the session's subscriber
// and to its webhook receiver.
type probe struct {
	net       *wafake.Network
	from, to  string // the contact, the session's phone
	sessionID string
	sub       apptest.Stream
	hook      *apptest.Receiver
	spacing   time.Duration
}

// latencies are one probe's measures, in the order of its texts.
type latencies struct{ toSub, toHook []time.Duration }

func (l latencies) String() string {
	return fmt.Sprintf("to the subscriber p50 %s p90 %s p100 %s; to the webhook p50 %s p90 %s p100 %s",
		percentile(l.toSub, 50), percentile(l.toSub, 90), percentile(l.toSub, 100),
		percentile(l.toHook, 50), percentile(l.toHook, 90), percentile(l.toHook, 100))
}

// measure sends n texts named prefix00, prefix01, … and waits until every
// one has reached the subscriber (in order) and the webhook (in any order:
// a webhook has several attempts in flight), exactly once.
func (p probe) measure(t testing.TB, prefix string, n int) latencies {
	t.Helper()
	sentAt := make([]time.Time, n)
	sendErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(p.spacing)
		defer tick.Stop()
		for i := range n {
			if i > 0 {
				<-tick.C
			}
			sentAt[i] = time.Now()
			if _, err := p.net.SendText(p.from, p.to, fmt.Sprintf("%s%02d", prefix, i)); err != nil {
				sendErr <- fmt.Errorf("send %s%02d: %w", prefix, i, err)
				return
			}
		}
		sendErr <- nil
	}()

	seenAt := make([]time.Time, n)
	for i := range n {
		e := readEvent(t, p.sub)
		if want := fmt.Sprintf("%s%02d", prefix, i); e.text() != want || e.SessionID != p.sessionID {
			t.Fatalf("the subscriber got %q of %s, want %q of %s", e.text(), e.SessionID, want, p.sessionID)
		}
		seenAt[i] = time.Now()
	}
	if err := <-sendErr; err != nil {
		t.Fatal(err)
	}
	deliveredAt := make([]time.Time, n)
	for range n {
		r := p.hook.Next(t)
		var env struct {
			SessionID string
			Data      struct{ Text string }
		}
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Fatalf("webhook body %s: %v", r.Body, err)
		}
		var i int
		if _, err := fmt.Sscanf(strings.TrimPrefix(env.Data.Text, prefix), "%d", &i); err != nil ||
			!strings.HasPrefix(env.Data.Text, prefix) || i < 0 || i >= n || env.SessionID != p.sessionID {
			t.Fatalf("the webhook got %q of %s, want %s00 to %s%02d of %s", env.Data.Text, env.SessionID, prefix, prefix, n-1, p.sessionID)
		}
		if !deliveredAt[i].IsZero() {
			t.Fatalf("the webhook got %q twice", env.Data.Text)
		}
		deliveredAt[i] = r.At
	}
	l := latencies{toSub: make([]time.Duration, n), toHook: make([]time.Duration, n)}
	for i := range n {
		l.toSub[i], l.toHook[i] = seenAt[i].Sub(sentAt[i]), deliveredAt[i].Sub(sentAt[i])
	}
	return l
}

// TestIsolation (issue 10, must show 5): session A takes a burst of
// texts while both of its webhooks are dead (one holds every request
// until the test ends, one answers 500 and is retried every 50 ms), and
// meanwhile a contact sends session B texts, spaced out. Each of B's texts
// reaches B's subscriber and B's healthy webhook within a bound, measured
// from the network's send, while A's burst is still being taken in and
// A's deliveries are still pending: one session's load and a dead receiver
// do not hold up another session.
func TestIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test (a 2,000-text burst, latencies bounded): make test runs it, make test-short skips it")
	}
	const (
		burst   = 2000
		texts   = 20
		spacing = 50 * time.Millisecond
		// The bound of every one of B's latencies, under -race on a
		// loaded machine; unloaded, they are tens of milliseconds.
		bound = 2 * time.Second
	)
	cfg := apptest.SandboxConfig(t)
	// A's failing receiver is tried again every 50 ms for as long as the
	// test runs; the hanging one's attempts last longer than the test.
	cfg.WebhookRetry = slices.Repeat([]time.Duration{50 * time.Millisecond}, config.MaxRetryAttempts)
	cfg.WebhookTimeout = time.Minute
	s := apptest.StartLive(t, cfg)
	net := s.Network(t)
	const phoneA, contactA, phoneB, contactB = "4915550014001", "4915550014002", "4915550014101", "4915550014102"
	a := s.LinkSession(t, phoneA)
	b := s.LinkSession(t, phoneB)
	devA, err := whatsapp.ParseJID(a.JID)
	if err != nil {
		t.Fatal(err)
	}

	hang, failing := newDeadReceiver(t, true), newDeadReceiver(t, false)
	createWebhook(t, s, a.ID, hang.URL, nil)
	failingID := createWebhook(t, s, a.ID, failing.URL, nil)
	healthy := apptest.NewReceiver(t)
	createWebhook(t, s, b.ID, healthy.URL, inboundOnly)
	sub := s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, map[string]any{"s": b.ID, "k": inboundOnly}, apptest.StreamOptions{})
	waitSubscribers(t, s, 1)
	probeB := probe{net: net, from: contactB, to: phoneB, sessionID: b.ID, sub: sub, hook: healthy, spacing: spacing}
	// The same measure with nothing else going on, to compare with.
	idle := probeB.measure(t, "idle-", 5)

	begin := time.Now()
	var queued struct{ SandboxSendBurst int }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $n: Int!) { sandboxSendBurst(sessionId: $s, from: $f, count: $n, prefix: "a-") }`,
		map[string]any{"s": a.ID, "f": contactA, "n": burst}, &queued)
	if queued.SandboxSendBurst != burst {
		t.Fatalf("the burst queued %d texts, want %d", queued.SandboxSendBurst, burst)
	}
	// A's dead receivers are busy: the hanging one holds as many attempts
	// as one webhook may have in flight, the failing one is being tried.
	hang.await(t, webhook.DefaultPerWebhook)
	failing.await(t, 1)
	atStart := struct {
		unacked int
		seq     int64
		fails   int64
	}{net.Unacked(devA), lastSeq(t, s, a.ID), failing.hits.Load()}
	t.Logf("A's burst of %d queued in %s; when B's texts begin A has %d unacknowledged, seq %d stored, %d failed attempts",
		burst, time.Since(begin).Round(time.Millisecond), atStart.unacked, atStart.seq, atStart.fails)
	if atStart.unacked == 0 {
		t.Fatal("A's burst was taken in before B's texts began: nothing would be shown")
	}

	loaded := probeB.measure(t, "b-", texts)

	// The moment B's last text is in: A is still busy.
	atEnd := struct {
		unacked int
		seq     int64
		fails   int64
	}{net.Unacked(devA), lastSeq(t, s, a.ID), failing.hits.Load()}
	pending := pendingDeliveries(t, s, a.ID, failingID)
	t.Logf("when B's last text is in (%s after the burst was queued): A has %d unacknowledged, seq %d stored (%d more), "+
		"%d failed attempts (%d more), %d attempts held by the hanging receiver, %d of the failing one's newest 100 deliveries pending",
		time.Since(begin).Round(time.Millisecond), atEnd.unacked, atEnd.seq, atEnd.seq-atStart.seq, atEnd.fails, atEnd.fails-atStart.fails,
		hang.inFlight.Load(), pending)
	if atEnd.unacked == 0 {
		t.Error("A's burst was all taken in before B's last text arrived: the measure is not under A's load")
	}
	if atEnd.seq <= atStart.seq {
		t.Errorf("A's log did not grow while B's texts went through (seq %d, then %d): A was not being served", atStart.seq, atEnd.seq)
	}
	if atEnd.fails <= atStart.fails || pending == 0 {
		t.Errorf("A's failing receiver: %d attempts, then %d, %d deliveries pending: it was not being tried while B's texts went through",
			atStart.fails, atEnd.fails, pending)
	}
	if n := hang.inFlight.Load(); n != webhook.DefaultPerWebhook {
		t.Errorf("the hanging receiver holds %d attempts, want the per-webhook bound %d", n, webhook.DefaultPerWebhook)
	}

	t.Logf("B's %d texts while A is loaded, from the network's send: %s", texts, loaded)
	t.Logf("B's %d texts while all was idle, for comparison: %s", len(idle.toSub), idle)
	toSub, toHook := loaded.toSub, loaded.toHook
	for i := range texts {
		if toSub[i] > bound || toHook[i] > bound {
			t.Errorf("b-%02d: %s to the subscriber, %s to the webhook; want both within %s", i, toSub[i], toHook[i], bound)
		}
	}
}
