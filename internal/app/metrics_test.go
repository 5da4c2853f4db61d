package app_test

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wagraph/wagraph/internal/apptest"
)

// scrapeMetrics reads /metrics with token and parses the text format.
func scrapeMetrics(t *testing.T, s *apptest.Server, token string) map[string]*dto.MetricFamily {
	t.Helper()
	res := s.Do(t, "GET", "/metrics", "Bearer "+token, "", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", res.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: Content-Type %q, want Prometheus' text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatalf("GET /metrics: not the text format: %v\n%s", err, res.Body)
	}
	return fams
}

// metricValue is the value of the series of family name with exactly
// labels (a histogram's count); ok is false when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
next:
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// waitMetric scrapes until the series of family with exactly labels has
// value want (a histogram: its count); it fails the test after 10 s.
// Counters and gauges move just after what they count is visible (an
// attempt is recorded, then counted; a subscription is registered, then
// counted), so a test waits for them as a scraper would.
func waitMetric(t *testing.T, s *apptest.Server, family string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := metricValue(scrapeMetrics(t, s, apptest.AdminToken), family, labels)
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v (present %v) after 10 s, want %v", family, labels, got, ok, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetrics (issue 10): after sends through REST and GraphQL on a
// connected sandbox session, an inbound message delivered to a webhook and
// a subscription opened and closed, /metrics carries every family
// operations.md lists, with the values these add up to; only an admin
// token reads it; /debug/pprof is not on the API address.
func TestMetrics(t *testing.T) {
	s := apptest.StartSandbox(t)
	sess := s.LinkSession(t, "4915550101001")
	idle := s.CreateSession(t, "never connected")
	const to = "4915550101002"

	res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"`+to+`","text":"over REST"}`)
	if res.Status != http.StatusOK {
		t.Fatalf("REST send: %d %s", res.Status, res.Body)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $in: SendTextInput!) { sendText(sessionId: $id, input: $in) { messageId } }`,
		map[string]any{"id": sess.ID, "in": map[string]any{"number": to, "text": "over GraphQL"}}, nil)
	res = s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"`+to+`","text":" "}`)
	if res.Status != http.StatusBadRequest {
		t.Fatalf("REST send of a blank text: %d %s, want 400", res.Status, res.Body)
	}
	res = s.REST(t, "POST", "/session/"+idle+"/message/text", apptest.AdminToken, `{"number":"`+to+`","text":"nobody home"}`)
	if res.Status == http.StatusOK {
		t.Fatalf("REST send on a session never connected: %d %s", res.Status, res.Body)
	}

	// Refused: no token, a bad one, a user token that is not an admin's,
	// a session token.
	var user struct {
		CreateUser struct{ Token string }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "watcher") { token } }`, nil, &user)
	var created struct {
		CreateSession struct{ Token string }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "with a token") { token } }`, nil, &created)
	for _, tc := range []struct {
		name, token string
		status      int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"unknown token", "Bearer wgu_0000000000000000000000000000000000000000", http.StatusUnauthorized},
		{"user token", "Bearer " + user.CreateUser.Token, http.StatusForbidden},
		{"session token", "Bearer " + created.CreateSession.Token, http.StatusForbidden},
	} {
		res := s.Do(t, "GET", "/metrics", tc.token, "", nil)
		if res.Status != tc.status || strings.Contains(string(res.Body), "wagraph_") {
			t.Errorf("/metrics with %s: %d %s, want %d and no metrics", tc.name, res.Status, res.Body, tc.status)
		}
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
		if res := s.Do(t, "GET", path, apptest.AdminToken, "", nil); res.Status != http.StatusNotFound {
			t.Errorf("GET %s on the API address: %d, want 404", path, res.Status)
		}
	}

	// An inbound message, delivered to a webhook answering 200; the
	// delivery is recorded before it is counted, so the count is waited
	// for as a scraper sees it.
	rc := apptest.NewReceiver(t)
	var hook struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } } }`,
		map[string]any{"s": sess.ID, "u": rc.URL}, &hook)
	if _, err := s.Network(t).SendText(to, sess.Phone, "inbound"); err != nil {
		t.Fatalf("the contact's text: %v", err)
	}
	if r := rc.Next(t); !strings.Contains(string(r.Body), `"inbound"`) {
		t.Fatalf("the webhook got %s, want the inbound text", r.Body)
	}
	// testWebhook stores a webhook.test event (not through the session's
	// sink: it is counted all the same) and delivers it.
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`,
		map[string]any{"s": sess.ID, "w": hook.CreateWebhook.Webhook.ID}, nil)
	if r := rc.Next(t); !strings.Contains(string(r.Body), `"webhook.test"`) {
		t.Fatalf("the webhook got %s, want the test event", r.Body)
	}
	s.WaitDeliveries(t, sess.ID, hook.CreateWebhook.Webhook.ID)
	waitMetric(t, s, "wagraph_webhook_deliveries_total", map[string]string{"outcome": "delivered"}, 2)
	// Subscribers: one open is 1, closed again 0.
	sub := s.Subscribe(t, apptest.AdminToken, `subscription($s: ID!) { events(sessionId: $s) { id } }`, map[string]any{"s": sess.ID})
	waitMetric(t, s, "wagraph_subscribers", map[string]string{}, 1)
	sub.Close()
	waitMetric(t, s, "wagraph_subscribers", map[string]string{}, 0)

	fams := scrapeMetrics(t, s, apptest.AdminToken)
	for _, name := range []string{
		"wagraph_sessions", "wagraph_events_stored_total", "wagraph_webhook_deliveries_total",
		"wagraph_webhook_delivery_duration_seconds", "wagraph_subscribers", "wagraph_sends_total",
		"wagraph_http_requests_total", "wagraph_http_request_duration_seconds", "wagraph_whatsapp_version_info",
		"wagraph_store_failures_total", "wagraph_undecryptable_messages_total",
		"wagraph_nats_published_total", "wagraph_nats_publish_failures_total", "wagraph_nats_lag_events",
		"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes",
	} {
		if fams[name] == nil {
			t.Errorf("no family %s", name)
		} else if fams[name].GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
	}

	// Sessions by status: the linked one CONNECTED, two never connected
	// (the idle one, the one with a token), none in between.
	for status, want := range map[string]float64{"CONNECTED": 1, "DISCONNECTED": 2, "CONNECTING": 0, "PAIRING": 0, "LOGGED_OUT": 0} {
		if got, ok := metricValue(fams, "wagraph_sessions", map[string]string{"status": status}); !ok || got != want {
			t.Errorf("wagraph_sessions{status=%q} = %v (present %v), want %v", status, got, ok, want)
		}
	}
	// Sends by kind and outcome.
	for outcome, want := range map[string]float64{"sent": 2, "bad_user_input": 1, "not_connected": 1} {
		if got, ok := metricValue(fams, "wagraph_sends_total", map[string]string{"kind": "text", "outcome": outcome}); !ok || got != want {
			t.Errorf("wagraph_sends_total{kind=text,outcome=%q} = %v (present %v), want %v", outcome, got, ok, want)
		}
	}
	if got, ok := metricValue(fams, "wagraph_sends_total", map[string]string{"kind": "image", "outcome": "sent"}); !ok || got != 0 {
		t.Errorf("wagraph_sends_total{kind=image,outcome=sent} = %v (present %v), want 0 from the start", got, ok)
	}
	// HTTP requests by route (the pattern, never the path) and status.
	sendRoute := "POST /api/v1/session/{sessionId}/message/text"
	for _, tc := range []struct {
		route, status string
		atLeast       float64
	}{
		{sendRoute, "200", 1},
		{sendRoute, "400", 1},
		{"/graphql", "200", 5}, // linking, the send, creating users and sessions
		{"GET /metrics", "401", 2},
		{"GET /metrics", "403", 2},
		{"unmatched", "404", 3}, // /debug/pprof on the API address
	} {
		got, ok := metricValue(fams, "wagraph_http_requests_total", map[string]string{"route": tc.route, "status": tc.status})
		if !ok || got < tc.atLeast {
			t.Errorf("wagraph_http_requests_total{route=%q,status=%s} = %v (present %v), want at least %v", tc.route, tc.status, got, ok, tc.atLeast)
		}
	}
	if got, ok := metricValue(fams, "wagraph_http_request_duration_seconds", map[string]string{"route": sendRoute}); !ok || got < 2 {
		t.Errorf("wagraph_http_request_duration_seconds{route=%q} counts %v requests (present %v), want at least 2", sendRoute, got, ok)
	}
	for _, m := range fams["wagraph_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), sess.ID) || strings.Contains(l.GetValue(), idle) {
				t.Errorf("a session id is in the label %s=%q: the raw path, not the route", l.GetName(), l.GetValue())
			}
		}
	}
	// The version in use: the simulated network's current one, read at start.
	want := s.Network(t).CurrentVersion().String()
	if got, ok := metricValue(fams, "wagraph_whatsapp_version_info", map[string]string{"version": want}); !ok || got != 1 || len(fams["wagraph_whatsapp_version_info"].GetMetric()) != 1 {
		t.Errorf("wagraph_whatsapp_version_info: %v, want one series {version=%q} 1", fams["wagraph_whatsapp_version_info"].GetMetric(), want)
	}
	if !regexp.MustCompile(`^2\.\d+\.\d+$`).MatchString(want) {
		t.Errorf("version %q is not 2.x.y", want)
	}
	// Events stored by kind: the two sends' outbound messages and their
	// messages.send (sent), the messages.send (failed) of the send on the
	// session never connected, the contact's inbound message, the test
	// event; every kind has its series from the start (call at 0 here).
	for _, tc := range []struct {
		kind string
		want float64
	}{
		{"outbound-message.upsert", 2},
		{"messages.send", 3},
		{"inbound-message.upsert", 1},
		{"webhook.test", 1},
		{"call", 0},
	} {
		if got, ok := metricValue(fams, "wagraph_events_stored_total", map[string]string{"kind": tc.kind}); !ok || got != tc.want {
			t.Errorf("wagraph_events_stored_total{kind=%q} = %v (present %v), want %v", tc.kind, got, ok, tc.want)
		}
	}
	// Deliveries: the two to the receiver answering 200, with their
	// latency; the other outcomes' series at 0.
	for outcome, want := range map[string]float64{"delivered": 2, "retry": 0, "failed": 0, "gone": 0} {
		for _, family := range []string{"wagraph_webhook_deliveries_total", "wagraph_webhook_delivery_duration_seconds"} {
			if got, ok := metricValue(fams, family, map[string]string{"outcome": outcome}); !ok || got != want {
				t.Errorf("%s{outcome=%q} = %v (present %v), want %v", family, outcome, got, ok, want)
			}
		}
	}
	if got, ok := metricValue(fams, "wagraph_subscribers", map[string]string{}); !ok || got != 0 {
		t.Errorf("wagraph_subscribers = %v (present %v) after the subscription closed, want 0", got, ok)
	}
	if got := len(fams["wagraph_events_stored_total"].GetMetric()); got != 28 {
		t.Errorf("wagraph_events_stored_total has %d series, want the 27 kinds and webhook.test", got)
	}
	if got, ok := metricValue(fams, "go_goroutines", map[string]string{}); !ok || got < 5 {
		t.Errorf("go_goroutines = %v (present %v), want a running server's", got, ok)
	}
}
