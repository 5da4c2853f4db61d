package webhook_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	entattempt "github.com/wagraph/wagraph/ent/attempt"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/webhook"
)

// waitLimit fails a test whose expected signal never comes; it is no
// measure of speed.
const waitLimit = 30 * time.Second

// openOutbox opens a fresh database of the run's backend as the app does
// (internal/dbtest), with user u1 and session s1, and returns it with its
// location.
func openOutbox(t *testing.T) (*ent.Client, dbtest.Location) {
	t.Helper()
	loc := dbtest.NewLocation(t)
	db := loc.Open(t).Ent
	ctx := context.Background()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	return db, loc
}

// addHook stores an enabled webhook of s1 selecting kinds, signed with
// testSecret, with one custom header.
func addHook(t *testing.T, db *ent.Client, id, url string, kinds ...events.Kind) {
	t.Helper()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	db.Webhook.Create().SetID(id).SetSessionID("s1").SetURL(url).SetEvents(names).
		SetHeaders(map[string]string{"X-Team": "ops"}).SetSecret(testSecret).ExecX(context.Background())
}

// clock is a settable clock; step, when set, is added after every reading.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// observer hands the test each attempt's outcome as it is recorded.
type observer struct{ outcomes chan string }

func newObserver() *observer { return &observer{outcomes: make(chan string, 1000)} }

func (o *observer) DeliveryAttempted(outcome string, _ time.Duration) { o.outcomes <- outcome }

// next waits for the next outcome.
func (o *observer) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-o.outcomes:
		return s
	case <-time.After(waitLimit):
		t.Fatalf("no delivery outcome within %s", waitLimit)
		return ""
	}
}

// nextN waits for n outcomes and returns them in order.
func (o *observer) nextN(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = o.next(t)
	}
	return out
}

// running is a Dispatcher run by a test.
type running struct {
	*webhook.Dispatcher
	stop func() // cancels Run and waits for it
}

// runDispatcher runs a dispatcher until the test ends (or stop).
func runDispatcher(t *testing.T, opts webhook.DispatcherOptions) running {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	d := webhook.NewDispatcher(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(waitLimit):
				t.Errorf("Run did not return within %s of its context ending", waitLimit)
			}
		})
	}
	t.Cleanup(stop)
	return running{Dispatcher: d, stop: stop}
}

func newLog(t *testing.T, db *ent.Client, now func() time.Time) *events.Log {
	t.Helper()
	l := events.NewLog(db, events.LogOptions{Now: now})
	t.Cleanup(func() { l.Close() })
	return l
}

func appendEvents(t *testing.T, l *events.Log, evs ...events.New) []events.Envelope {
	t.Helper()
	envs, err := l.Append(context.Background(), "s1", evs)
	if err != nil {
		t.Fatal(err)
	}
	return envs
}

// attemptRow is the part of an attempt row a test compares.
type attemptRow struct {
	n, code int // code 0: no answer
	err     string
}

func attemptsOf(t *testing.T, db *ent.Client, deliveryID string) []attemptRow {
	t.Helper()
	rows := db.Attempt.Query().Where(entattempt.DeliveryID(deliveryID)).Order(ent.Asc(entattempt.FieldN)).AllX(context.Background())
	out := make([]attemptRow, len(rows))
	for i, r := range rows {
		out[i] = attemptRow{n: r.N, err: r.Error}
		if r.StatusCode != nil {
			out[i].code = *r.StatusCode
		}
	}
	return out
}

func deliveryOf(t *testing.T, db *ent.Client, eventID, webhookID string) *ent.Delivery {
	t.Helper()
	return db.Delivery.Query().Where(entdelivery.EventID(eventID), entdelivery.WebhookID(webhookID)).OnlyX(context.Background())
}

// TestDispatchRetryThenDelivered: a receiver answering 500 then 200 gets
// the event twice, signed the same way under the same webhook-id, and the
// delivery log holds both attempts; the delivery is then DELIVERED.
func TestDispatchRetryThenDelivered(t *testing.T) {
	db, _ := openOutbox(t)
	var mu sync.Mutex
	answers := []int{http.StatusInternalServerError, http.StatusOK}
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
		mu.Lock()
		code := answers[0]
		answers = answers[1:]
		mu.Unlock()
		w.WriteHeader(code)
	})
	addHook(t, db, "w1", rc.srv.URL+"/hook", events.MessagesUpdate)
	logger, logs := logtest.New(slog.LevelDebug)
	obs := newObserver()
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Logger: logger,
		Schedule: []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond}})

	before := time.Now()
	env := appendEvents(t, newLog(t, db, nil), events.New{Kind: events.MessagesUpdate, Data: json.RawMessage(`{"id":"M1","status":"read"}`)})[0]
	d.Wake()
	if got := obs.nextN(t, 2); got[0] != webhook.OutcomeRetry || got[1] != webhook.OutcomeDelivered {
		t.Fatalf("outcomes %v, want [retry delivered]", got)
	}
	after := time.Now()

	body, _ := json.Marshal(env)
	reqs := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for _, req := range reqs {
		checkSigned(t, req, env.ID, body, before, after)
		if got := req.header.Get("X-Team"); got != "ops" {
			t.Errorf("custom header X-Team %q, want ops", got)
		}
	}
	dlv := deliveryOf(t, db, env.ID, "w1")
	if dlv.Status != entdelivery.StatusDELIVERED || dlv.Attempts != 2 || dlv.LastStatusCode == nil || *dlv.LastStatusCode != 200 || dlv.LastError != "" {
		t.Errorf("delivery %+v, want DELIVERED after 2 attempts, last 200 without error", dlv)
	}
	want := []attemptRow{{1, 500, "the receiver answered 500"}, {2, 200, ""}}
	if got := attemptsOf(t, db, dlv.ID); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("attempts %+v, want %+v", got, want)
	}
	// Every attempt is logged with what identifies it, never the secret
	// or the body.
	var recs []map[string]any
	for _, r := range logs.Records() {
		if r["msg"] == "webhook attempt" {
			recs = append(recs, r)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d attempt log records, want 2: %s", len(recs), logs.Lines())
	}
	for i, r := range recs {
		if r["delivery_id"] != dlv.ID || r["event_id"] != env.ID || r["session_id"] != "s1" || r["attempt"] != float64(i+1) ||
			r["status_code"] != float64(want[i].code) || r["duration"] == nil {
			t.Errorf("log record %v lacks the attempt's delivery, event, session, number, status or duration", r)
		}
	}
	for _, secret := range []string{testSecret, strings.TrimPrefix(testSecret, "whsec_"), `"M1"`} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %s", secret)
		}
	}
}

// TestDispatchGone: 410 disables the webhook at once: the delivery ends
// FAILED saying so, the webhook's other pending delivery ends without a
// request, and later events are not owed to it; a webhook test still
// reaches it.
func TestDispatchGone(t *testing.T) {
	db, _ := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusGone))
	addHook(t, db, "w1", rc.srv.URL, events.Call)
	obs := newObserver()
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	// One at a time, earliest due first: the second delivery is taken
	// after the first is recorded, and before the test event stored
	// after that.
	d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Concurrency: 1,
		Schedule: []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond}})
	log := newLog(t, db, nil)
	envs := appendEvents(t, log, events.New{Kind: events.Call}, events.New{Kind: events.Call})
	d.Wake()
	if got := obs.next(t); got != webhook.OutcomeGone {
		t.Fatalf("outcome %s, want gone", got)
	}
	test := appendEvents(t, log, events.New{Kind: events.WebhookTest, Webhooks: []string{"w1"}})[0]
	d.Wake()
	if got := obs.next(t); got != webhook.OutcomeGone {
		t.Fatalf("the test's outcome %s, want gone", got)
	}
	var ids []string
	for _, r := range rc.requests() {
		ids = append(ids, r.header.Get("webhook-id"))
	}
	if len(ids) != 2 || ids[1] != test.ID || (ids[0] != envs[0].ID && ids[0] != envs[1].ID) {
		t.Errorf("receiver got webhook-ids %v, want one of the two events, then the test %s: no attempt after the 410", ids, test.ID)
	}
	if db.Webhook.GetX(context.Background(), "w1").Enabled {
		t.Error("the webhook is still enabled after a 410")
	}
	var gone, skipped *ent.Delivery
	for _, e := range envs {
		dlv := deliveryOf(t, db, e.ID, "w1")
		if dlv.Attempts == 1 {
			gone = dlv
		} else {
			skipped = dlv
		}
	}
	if gone == nil || skipped == nil {
		t.Fatal("want one delivery attempted once and one never")
	}
	if gone.Status != entdelivery.StatusFAILED || gone.LastError != "the receiver answered 410 Gone: the webhook is now disabled" {
		t.Errorf("the 410 delivery: %s %q, want FAILED saying the 410 disabled the webhook", gone.Status, gone.LastError)
	}
	if got := attemptsOf(t, db, gone.ID); len(got) != 1 || got[0].code != 410 {
		t.Errorf("attempts of the 410 delivery %+v, want one answered 410", got)
	}
	if skipped.Status != entdelivery.StatusFAILED || skipped.Attempts != 0 || skipped.LastError != "webhook disabled" {
		t.Errorf("the other delivery: %s after %d attempts %q, want FAILED after 0 saying webhook disabled", skipped.Status, skipped.Attempts, skipped.LastError)
	}
	later := appendEvents(t, log, events.New{Kind: events.Call})[0]
	if n := db.Delivery.Query().Where(entdelivery.EventID(later.ID)).CountX(context.Background()); n != 0 {
		t.Errorf("%d deliveries of a later event to the disabled webhook", n)
	}
}

// TestDispatchPrivateRefused: without --allow-private-urls a receiver on
// loopback is refused when the socket would connect; every attempt records
// the refusal, and the delivery fails after the last.
func TestDispatchPrivateRefused(t *testing.T) {
	db, _ := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusOK))
	addHook(t, db, "w1", rc.srv.URL+"/hook", events.Call)
	obs := newObserver()
	sender := webhook.NewSender(netguard.New(netguard.Options{}), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs,
		Schedule: []time.Duration{0, 20 * time.Millisecond}})
	env := appendEvents(t, newLog(t, db, nil), events.New{Kind: events.Call})[0]
	d.Wake()
	if got := obs.nextN(t, 2); got[0] != webhook.OutcomeRetry || got[1] != webhook.OutcomeFailed {
		t.Fatalf("outcomes %v, want [retry failed]", got)
	}
	if n, c := len(rc.requests()), rc.conns.Load(); n != 0 || c != 0 {
		t.Errorf("receiver got %d requests on %d connections, want none", n, c)
	}
	dlv := deliveryOf(t, db, env.ID, "w1")
	if dlv.Status != entdelivery.StatusFAILED || dlv.Attempts != 2 || dlv.LastStatusCode != nil {
		t.Errorf("delivery %s after %d attempts, status code %v; want FAILED after 2 without one", dlv.Status, dlv.Attempts, dlv.LastStatusCode)
	}
	want := "refused: 127.0.0.1 is a loopback address"
	for _, a := range attemptsOf(t, db, dlv.ID) {
		if a.code != 0 || a.err != want {
			t.Errorf("attempt %+v, want no status code and %q", a, want)
		}
	}
}

// TestDispatchDeadWebhookDoesNotStarve: a receiver that never answers holds
// at most its webhook's bound of the slots, so another webhook's events,
// stored after its own, are all delivered while it hangs; when the
// dispatcher stops, the hanging attempts are given back uncounted and due.
func TestDispatchDeadWebhookDoesNotStarve(t *testing.T) {
	db, _ := openOutbox(t)
	var mu sync.Mutex
	hanging := 0
	dead := newReceiver(t, func(_ http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
		mu.Lock()
		hanging++
		mu.Unlock()
		<-release
	})
	live := newReceiver(t, answerStatus(http.StatusNoContent))
	addHook(t, db, "dead", dead.srv.URL, events.Call)
	addHook(t, db, "live", live.srv.URL, events.MessagesUpdate)
	obs := newObserver()
	sender := webhook.NewSender(publicGuard(dead, live), time.Minute, nil)
	t.Cleanup(sender.Close)
	// The log's clock steps, so the dead webhook's deliveries are due
	// first: without the per-webhook bound they would take all 4 slots.
	clk := &clock{t: time.Now().Add(-time.Hour), step: time.Millisecond}
	log := newLog(t, db, clk.now)
	var deadEvents, liveEvents []events.Envelope
	for range 6 {
		deadEvents = append(deadEvents, appendEvents(t, log, events.New{Kind: events.Call})...)
	}
	for range 6 {
		liveEvents = append(liveEvents, appendEvents(t, log, events.New{Kind: events.MessagesUpdate})...)
	}
	d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Concurrency: 4, PerWebhook: 2,
		Schedule: []time.Duration{0}})
	for i, o := range obs.nextN(t, len(liveEvents)) {
		if o != webhook.OutcomeDelivered {
			t.Fatalf("outcome %d: %s, want delivered", i, o)
		}
	}
	for _, e := range liveEvents {
		if dlv := deliveryOf(t, db, e.ID, "live"); dlv.Status != entdelivery.StatusDELIVERED {
			t.Errorf("live delivery %s: %s, want DELIVERED", dlv.ID, dlv.Status)
		}
	}
	mu.Lock()
	n := hanging
	mu.Unlock()
	if n > 2 {
		t.Errorf("the dead receiver holds %d requests, want at most its bound of 2", n)
	}

	d.stop()
	for _, e := range deadEvents {
		dlv := deliveryOf(t, db, e.ID, "dead")
		if dlv.Status != entdelivery.StatusPENDING || dlv.Attempts != 0 || dlv.NextAttemptAt.After(time.Now()) {
			t.Errorf("dead delivery after stop: %s, %d attempts, due %s; want PENDING, none, due", dlv.Status, dlv.Attempts, dlv.NextAttemptAt)
		}
	}
	if n := db.Attempt.Query().Where(entattempt.HasDeliveryWith(entdelivery.WebhookID("dead"))).CountX(context.Background()); n != 0 {
		t.Errorf("%d attempts recorded for the stopped hanging requests", n)
	}
}

// TestDispatchResumesAfterRestart: the outbox is only rows: a new
// dispatcher on the reopened database makes the retry scheduled by the
// one before at its time, and the first attempt of a delivery stored while
// none ran.
func TestDispatchResumesAfterRestart(t *testing.T) {
	db, path := openOutbox(t)
	var mu sync.Mutex
	calls := 0
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	addHook(t, db, "w1", rc.srv.URL, events.Call)
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	t0 := time.Now().UTC()
	clk := &clock{t: t0}
	schedule := []time.Duration{0, time.Hour}
	log := newLog(t, db, clk.now)
	retried := appendEvents(t, log, events.New{Kind: events.Call})[0]

	obs := newObserver()
	first := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Now: clk.now, Schedule: schedule})
	first.Wake()
	if got := obs.next(t); got != webhook.OutcomeRetry {
		t.Fatalf("first run: %s, want retry", got)
	}
	first.stop()
	log.Close()
	fresh := appendEvents(t, newLog(t, db, clk.now), events.New{Kind: events.Call})[0]
	db.Close()

	db = path.Open(t).Ent
	clk.set(t0.Add(2 * time.Hour)) // past the retry's time (1h ± jitter)
	obs = newObserver()
	runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Now: clk.now, Schedule: schedule})
	if got := obs.nextN(t, 2); got[0] != webhook.OutcomeDelivered || got[1] != webhook.OutcomeDelivered {
		t.Fatalf("second run: %v, want both delivered", got)
	}
	for _, tt := range []struct {
		env      events.Envelope
		attempts int
	}{{retried, 2}, {fresh, 1}} {
		dlv := deliveryOf(t, db, tt.env.ID, "w1")
		if dlv.Status != entdelivery.StatusDELIVERED || dlv.Attempts != tt.attempts {
			t.Errorf("delivery %s: %s after %d attempts, want DELIVERED after %d", dlv.ID, dlv.Status, dlv.Attempts, tt.attempts)
		}
	}
}

// TestTwoDispatchersClaimOnce: two dispatchers on one outbox send each
// delivery once: a claim is won by one of them only.
func TestTwoDispatchersClaimOnce(t *testing.T) {
	db, _ := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusOK))
	addHook(t, db, "w1", rc.srv.URL, events.Call)
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	obs := newObserver()
	const n = 60
	evs := make([]events.New, n)
	for i := range evs {
		evs[i] = events.New{Kind: events.Call}
	}
	appendEvents(t, newLog(t, db, nil), evs...)
	for range 2 {
		runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Concurrency: 8, PerWebhook: 8, Schedule: []time.Duration{0}})
	}
	obs.nextN(t, n)
	ids := map[string]int{}
	for _, r := range rc.requests() {
		ids[r.header.Get("webhook-id")]++
	}
	if len(ids) != n {
		t.Errorf("%d events reached the receiver, want %d", len(ids), n)
	}
	for id, c := range ids {
		if c != 1 {
			t.Errorf("event %s sent %d times, want once", id, c)
		}
	}
	if c := db.Delivery.Query().Where(entdelivery.StatusEQ(entdelivery.StatusDELIVERED), entdelivery.Attempts(1)).CountX(context.Background()); c != n {
		t.Errorf("%d deliveries DELIVERED after one attempt, want %d", c, n)
	}
}
