package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/webhook"
)

// TestManyProcessesClaimOnce: dispatchers each on their own connection pool
// to one database, as separate processes have, attempt every delivery of
// several webhooks exactly once when every attempt succeeds.
func TestManyProcessesClaimOnce(t *testing.T) {
	db, loc := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusOK))
	hooks := []string{"w1", "w2", "w3"}
	for _, h := range hooks {
		addHook(t, db, h, rc.srv.URL+"/"+h, events.Call)
	}
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	const n = 150 // events; each owed to every hook
	evs := make([]events.New, n)
	for i := range evs {
		evs[i] = events.New{Kind: events.Call}
	}
	envs := appendEvents(t, newLog(t, db, nil), evs...)
	obs := newObserver()
	const processes = 4
	for range processes {
		runDispatcher(t, webhook.DispatcherOptions{DB: loc.Open(t).Ent, Sender: sender, Observer: obs,
			Concurrency: 8, PerWebhook: 4, Schedule: []time.Duration{0}})
	}
	total := n * len(hooks)
	for i, o := range obs.nextN(t, total) {
		if o != webhook.OutcomeDelivered {
			t.Fatalf("outcome %d: %s, want delivered", i, o)
		}
	}
	sent := map[string]int{} // "/hook event-id" → requests
	for _, r := range rc.requests() {
		sent[r.path+" "+r.header.Get("webhook-id")]++
	}
	for _, h := range hooks {
		for _, e := range envs {
			if c := sent["/"+h+" "+e.ID]; c != 1 {
				t.Errorf("event %s reached %s %d times, want once", e.ID, h, c)
			}
		}
	}
	if len(sent) != total {
		t.Errorf("%d (webhook, event) pairs reached the receiver, want %d", len(sent), total)
	}
	if c := db.Delivery.Query().Where(entdelivery.StatusEQ(entdelivery.StatusDELIVERED), entdelivery.Attempts(1)).CountX(context.Background()); c != total {
		t.Errorf("%d deliveries DELIVERED after one attempt, want %d", c, total)
	}
}

// TestClaimSkipsLockedRows (PostgreSQL): while another transaction holds
// the earliest due deliveries locked (a claimer mid-claim), a dispatcher
// claims and delivers the rest instead of waiting for that transaction:
// without SKIP LOCKED its claim would queue on the first locked row until
// the holder ended. The held rows are delivered, once, after it ends.
func TestClaimSkipsLockedRows(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("row locks are PostgreSQL's; SQLite's claimers serialise on its one writer lock")
	}
	db, loc := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusOK))
	addHook(t, db, "w1", rc.srv.URL, events.Call)
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	const n, held = 20, 5
	evs := make([]events.New, n)
	for i := range evs {
		evs[i] = events.New{Kind: events.Call}
	}
	appendEvents(t, newLog(t, db, nil), evs...)

	// The holder locks the deliveries a claimer takes first (its order:
	// next_attempt_at, then id) in a transaction of its own connection.
	ctx := context.Background()
	holder, err := loc.Open(t).Ent.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Rollback() })
	heldIDs, err := holder.Delivery.Query().Where(func(s *sql.Selector) { s.ForUpdate() }).
		Order(ent.Asc(entdelivery.FieldNextAttemptAt), ent.Asc(entdelivery.FieldID)).Limit(held).IDs(ctx)
	if err != nil || len(heldIDs) != held {
		t.Fatalf("lock the first %d deliveries: %v (%d locked)", held, err, len(heldIDs))
	}

	obs := newObserver()
	runDispatcher(t, webhook.DispatcherOptions{DB: loc.Open(t).Ent, Sender: sender, Observer: obs,
		Concurrency: 4, PerWebhook: 4, Schedule: []time.Duration{0}})
	for i, o := range obs.nextN(t, n-held) {
		if o != webhook.OutcomeDelivered {
			t.Fatalf("outcome %d: %s, want delivered", i, o)
		}
	}
	for _, id := range heldIDs {
		dlv := db.Delivery.GetX(ctx, id)
		if dlv.Status != entdelivery.StatusPENDING || dlv.Attempts != 0 {
			t.Errorf("held delivery %s: %s after %d attempts while locked, want PENDING, untouched", id, dlv.Status, dlv.Attempts)
		}
	}

	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	for i, o := range obs.nextN(t, held) {
		if o != webhook.OutcomeDelivered {
			t.Fatalf("outcome %d after the release: %s, want delivered", i, o)
		}
	}
	sent := map[string]int{}
	for _, r := range rc.requests() {
		sent[r.header.Get("webhook-id")]++
	}
	if len(sent) != n {
		t.Errorf("%d events reached the receiver, want %d", len(sent), n)
	}
	for id, c := range sent {
		if c != 1 {
			t.Errorf("event %s sent %d times, want once", id, c)
		}
	}
	if c := db.Delivery.Query().Where(entdelivery.StatusEQ(entdelivery.StatusDELIVERED), entdelivery.Attempts(1)).CountX(ctx); c != n {
		t.Errorf("%d deliveries DELIVERED after one attempt, want %d", c, n)
	}
}

// TestClaimReadsOwnersOnce (issue 35): the claim pass reads a webhook's
// owner (its session and the session's user, for the fair share) once per
// webhook, not with every pass: they never change, and read with each
// pass's candidates they cost more than the rest of the pass. Forty
// deliveries two at a time are many passes, and every one is still made.
func TestClaimReadsOwnersOnce(t *testing.T) {
	db, loc := openOutbox(t)
	rc := newReceiver(t, answerStatus(http.StatusOK))
	addHook(t, db, "w1", rc.srv.URL, events.Call)
	sender := webhook.NewSender(publicGuard(rc), 5*time.Second, nil)
	t.Cleanup(sender.Close)
	const n = 40
	evs := make([]events.New, n)
	for i := range evs {
		evs[i] = events.New{Kind: events.Call}
	}
	appendEvents(t, newLog(t, db, nil), evs...)

	// The dispatcher's own client, each statement seen: the sessions read
	// by id are the owners' reads.
	var mu sync.Mutex
	ownerReads, statements := 0, 0
	d := loc.Open(t)
	counted := ent.NewClient(ent.Driver(dialect.DebugWithContext(sql.OpenDB(d.Dialect, d.SQL), func(_ context.Context, args ...any) {
		s := fmt.Sprint(args...)
		mu.Lock()
		defer mu.Unlock()
		statements++
		if strings.Contains(s, "FROM `sessions` WHERE `sessions`.`id` IN") || strings.Contains(s, `FROM "sessions" WHERE "sessions"."id" IN`) {
			ownerReads++
		}
	})))
	obs := newObserver()
	runDispatcher(t, webhook.DispatcherOptions{DB: counted, Sender: sender, Observer: obs,
		Concurrency: 2, PerWebhook: 2, Schedule: []time.Duration{0}})
	for i, o := range obs.nextN(t, n) {
		if o != webhook.OutcomeDelivered {
			t.Fatalf("outcome %d: %s, want delivered", i, o)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if statements == 0 {
		t.Fatal("no statement seen: the counting driver is not the dispatcher's")
	}
	if ownerReads != 1 {
		t.Errorf("the webhook's session read %d times over %d deliveries two at a time, want once", ownerReads, n)
	}
}
