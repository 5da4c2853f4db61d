package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/webhook"
)

// TestFairDeliveryTarpit (issue 21, finding 5): user A's 40 webhooks to a
// receiver that never answers, and a burst to each, do not hold user B up:
// B's delivery, stored while A's attempts hang, reaches B's receiver before
// any of A's attempts ends (each would end only at the Sender's timeout),
// whether A's webhooks are on one session or spread over four. A holds at
// most half of the slots (the default PerUser) meanwhile.
func TestFairDeliveryTarpit(t *testing.T) {
	for _, tt := range []struct {
		name     string
		sessions int // A's sessions; A's webhooks are spread over them
	}{
		{"one session", 1},
		{"four sessions of one user", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const (
				concurrency = 32
				hooks       = 40
				burst       = 2 // events to each of A's webhooks
				// tarpitTimeout ends A's attempts: long past B's
				// delivery when the slots are shared fairly, yet short
				// enough that unfair code delivers B within waitB.
				tarpitTimeout = 10 * time.Second
				waitB         = 2 * time.Minute
			)
			db, _ := openOutbox(t)
			ctx := context.Background()
			aSessions := []string{"s1"}
			for i := 2; i <= tt.sessions; i++ {
				id := fmt.Sprintf("s1-%d", i)
				db.Session.Create().SetID(id).SetOwnerID("u1").ExecX(ctx)
				aSessions = append(aSessions, id)
			}
			db.User.Create().SetID("u2").SetName("other").ExecX(ctx)
			db.Session.Create().SetID("s2").SetOwnerID("u2").ExecX(ctx)

			var requests atomic.Int64 // to the tarpit; none answered
			tarpit := newReceiver(t, func(_ http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
				requests.Add(1)
				<-release
			})
			arrived := make(chan time.Time, 1)
			fast := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
				select {
				case arrived <- time.Now():
				default:
				}
				w.WriteHeader(http.StatusNoContent)
			})
			for i := range hooks {
				db.Webhook.Create().SetID(fmt.Sprintf("a%02d", i)).SetSessionID(aSessions[i%len(aSessions)]).
					SetURL(tarpit.srv.URL).SetEvents([]string{string(events.Call)}).SetHeaders(map[string]string{}).
					SetSecret(testSecret).ExecX(ctx)
			}
			db.Webhook.Create().SetID("b").SetSessionID("s2").SetURL(fast.srv.URL).
				SetEvents([]string{string(events.Call)}).SetHeaders(map[string]string{}).SetSecret(testSecret).ExecX(ctx)

			obs := newObserver()
			sender := webhook.NewSender(publicGuard(tarpit, fast), tarpitTimeout, nil)
			t.Cleanup(sender.Close)
			d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs,
				Concurrency: concurrency, Schedule: []time.Duration{0}})
			log := newLog(t, db, nil)
			for _, s := range aSessions {
				evs := make([]events.New, burst)
				for i := range evs {
					evs[i] = events.New{Kind: events.Call}
				}
				if _, err := log.Append(ctx, s, evs); err != nil {
					t.Fatal(err)
				}
			}
			d.Wake()
			// A's attempts are under way before B's event exists: B's
			// delivery is the newest in the outbox.
			deadline := time.Now().Add(waitLimit)
			for requests.Load() < 8 {
				if time.Now().After(deadline) {
					t.Fatalf("the tarpit got %d requests within %s, want at least 8", requests.Load(), waitLimit)
				}
				time.Sleep(5 * time.Millisecond)
			}
			stored := time.Now()
			if _, err := log.Append(ctx, "s2", []events.New{{Kind: events.Call}}); err != nil {
				t.Fatal(err)
			}
			d.Wake()

			var at time.Time
			select {
			case at = <-arrived:
			case <-time.After(waitB):
				t.Fatalf("B's delivery did not arrive within %s", waitB)
			}
			// The measure, for the record: no claim on speed.
			t.Logf("B's delivery arrived %s after its event was stored; A's tarpit had %d requests, none answered",
				at.Sub(stored).Round(time.Millisecond), requests.Load())
			// Outcomes are told in the order they are recorded: B's is
			// the only delivered one, A's each end failed (timed out).
			var ended int
			for o := obs.next(t); o != webhook.OutcomeDelivered; o = obs.next(t) {
				ended++
			}
			if ended > 0 {
				t.Errorf("B's delivery was recorded after %d of A's attempts ended: A's tarpit held B up", ended)
			}
			if n := requests.Load(); n > concurrency/2 {
				t.Errorf("A's tarpit got %d requests, none answered: want at most half of the %d slots", n, concurrency)
			}
		})
	}
}
