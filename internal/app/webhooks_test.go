package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestWebhooksAcrossRestart: the dispatcher runs with the app; Close stops
// it before the database closes, giving back the attempt it had in flight
// (PENDING, not counted, due at once), and the next start delivers it.
func TestWebhooksAcrossRestart(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.AllowPrivateURLs = true
	cfg.WebhookTimeout = time.Minute
	rc := apptest.NewReceiver(t)
	admin := apptest.AdminToken

	first := apptest.StartLive(t, cfg)
	sid := first.CreateSession(t, "hooks")
	var hook struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	first.MustGraphQL(t, admin, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u}) { webhook { id } } }`,
		map[string]any{"s": sid, "u": rc.URL}, &hook)
	wid := hook.CreateWebhook.Webhook.ID
	release := rc.Hold()
	var test struct {
		TestWebhook struct{ ID, EventID string }
	}
	first.MustGraphQL(t, admin, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id eventId } }`,
		map[string]any{"s": sid, "w": wid}, &test)
	rc.Next(t) // the attempt is in flight, its answer held
	first.Stop(t)
	release()

	db := openData(t, cfg)
	dlv := db.Delivery.GetX(context.Background(), test.TestWebhook.ID)
	if dlv.Status != "PENDING" || dlv.Attempts != 0 || dlv.NextAttemptAt.After(time.Now()) {
		t.Errorf("after Close the delivery is %s after %d attempts, due %s; want PENDING, none counted, due", dlv.Status, dlv.Attempts, dlv.NextAttemptAt)
	}
	db.Close()

	second := apptest.StartLive(t, cfg)
	second.WaitDeliveries(t, sid, wid)
	var log struct {
		Deliveries struct {
			Edges []struct {
				Node struct {
					Status  string
					Attempt int
				}
			}
		}
	}
	second.MustGraphQL(t, admin, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w) { edges { node { status attempt } } } }`,
		map[string]any{"s": sid, "w": wid}, &log)
	if e := log.Deliveries.Edges; len(e) != 1 || e[0].Node.Status != "DELIVERED" || e[0].Node.Attempt != 1 {
		t.Errorf("delivery log after the restart: %+v, want the one delivery DELIVERED at its first counted attempt", e)
	}
	reqs := rc.Requests()
	if len(reqs) != 2 || reqs[1].Header.Get("webhook-id") != test.TestWebhook.EventID {
		t.Errorf("receiver got %d requests, want the interrupted one and the delivery, webhook-id %s", len(reqs), test.TestWebhook.EventID)
	}
}

// openData opens the app's database while no app runs.
func openData(t *testing.T, cfg config.Config) *ent.Client {
	t.Helper()
	d, err := storage.Open(context.Background(), cfg.DataDir, cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return d.Ent
}

// TestDeliveryMetrics: the dispatcher's attempts reach /metrics by
// outcome, with their latency: a receiver answering 503 then 200 counts
// one retry and one delivered attempt; every outcome's series is there
// from the start.
func TestDeliveryMetrics(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.AllowPrivateURLs = true
	cfg.WebhookRetry = []time.Duration{0, 20 * time.Millisecond}
	s := apptest.StartLive(t, cfg)
	admin := apptest.AdminToken
	for _, outcome := range []string{"delivered", "retry", "failed", "gone"} {
		if got, ok := metricValue(scrapeMetrics(t, s, admin), "wagraph_webhook_deliveries_total", map[string]string{"outcome": outcome}); !ok || got != 0 {
			t.Errorf("before any delivery, deliveries{outcome=%q} = %v (present %v), want 0", outcome, got, ok)
		}
	}
	rc := apptest.NewReceiver(t, http.StatusServiceUnavailable, http.StatusOK)
	sid := s.CreateSession(t, "hooks")
	var hook struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	s.MustGraphQL(t, admin, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u}) { webhook { id } } }`,
		map[string]any{"s": sid, "u": rc.URL}, &hook)
	wid := hook.CreateWebhook.Webhook.ID
	s.MustGraphQL(t, admin, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`, map[string]any{"s": sid, "w": wid}, nil)
	s.WaitDeliveries(t, sid, wid)

	fams := scrapeMetrics(t, s, admin)
	for outcome, want := range map[string]float64{"retry": 1, "delivered": 1, "failed": 0, "gone": 0} {
		for _, family := range []string{"wagraph_webhook_deliveries_total", "wagraph_webhook_delivery_duration_seconds"} {
			if got, ok := metricValue(fams, family, map[string]string{"outcome": outcome}); !ok || got != want {
				t.Errorf("%s{outcome=%q} = %v (present %v), want %v", family, outcome, got, ok, want)
			}
		}
	}
}
