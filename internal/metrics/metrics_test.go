package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/metrics"
)

// scrape GETs h and parses the text format it answers.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("scrape: parse the text format: %v", err)
	}
	return fams
}

// series finds the one metric of family name with exactly the labels
// given, or nil.
func series(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is the value of a counter or gauge, or a histogram's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

func labelsOf(fams map[string]*dto.MetricFamily, name string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		out = append(out, strings.Join(ls, ","))
	}
	sort.Strings(out)
	return out
}

// TestHooks: each hook shows in the scrape, under its family, with its
// labels and the value the calls add up to.
func TestHooks(t *testing.T) {
	tests := []struct {
		name   string
		call   func(c *metrics.Counters)
		family string
		labels map[string]string
		want   float64
		sum    float64 // a histogram's sum of seconds, when it is one
	}{
		{"event stored", func(m *metrics.Counters) {
			m.EventStored("messages.update")
			m.EventStored("messages.update")
			m.EventStored("call")
		}, "wagraph_events_stored_total", map[string]string{"kind": "messages.update"}, 2, 0},
		{"delivery attempted: count", func(m *metrics.Counters) {
			m.DeliveryAttempted("retry", 300*time.Millisecond)
			m.DeliveryAttempted("delivered", 20*time.Millisecond)
			m.DeliveryAttempted("retry", 700*time.Millisecond)
		}, "wagraph_webhook_deliveries_total", map[string]string{"outcome": "retry"}, 2, 0},
		{"delivery attempted: latency", func(m *metrics.Counters) {
			m.DeliveryAttempted("retry", 300*time.Millisecond)
			m.DeliveryAttempted("delivered", 20*time.Millisecond)
			m.DeliveryAttempted("retry", 700*time.Millisecond)
		}, "wagraph_webhook_delivery_duration_seconds", map[string]string{"outcome": "retry"}, 2, 1.0},
		{"subscribers", func(m *metrics.Counters) {
			m.SubscriberStarted()
			m.SubscriberStarted()
			m.SubscriberStarted()
			m.SubscriberEnded()
		}, "wagraph_subscribers", map[string]string{}, 2, 0},
		{"sent", func(m *metrics.Counters) {
			m.Sent("text", "sent")
			m.Sent("image", "not_connected")
			m.Sent("image", "not_connected")
			m.Sent("image", "sent")
		}, "wagraph_sends_total", map[string]string{"kind": "image", "outcome": "not_connected"}, 2, 0},
		{"store failed", func(m *metrics.Counters) {
			m.StoreFailed()
			m.StoreFailed()
		}, "wagraph_store_failures_total", map[string]string{}, 2, 0},
		{"undecryptable", func(m *metrics.Counters) {
			m.Undecryptable()
		}, "wagraph_undecryptable_messages_total", map[string]string{}, 1, 0},
		{"nats published", func(m *metrics.Counters) {
			m.StreamPublished()
			m.StreamPublished()
			m.StreamPublishFailed()
		}, "wagraph_nats_published_total", map[string]string{}, 2, 0},
		{"nats publish failed", func(m *metrics.Counters) {
			m.StreamPublishFailed()
		}, "wagraph_nats_publish_failures_total", map[string]string{}, 1, 0},
		{"nats lag", func(m *metrics.Counters) {
			m.StreamLag(40)
			m.StreamLag(12)
		}, "wagraph_nats_lag_events", map[string]string{}, 12, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := metrics.NewCounters(metrics.Labels{})
			tt.call(c)
			fams := scrape(t, metrics.New(metrics.Options{Counters: c}).Handler())
			s := series(fams, tt.family, tt.labels)
			if s == nil {
				t.Fatalf("no series %s%v; the family has %v", tt.family, tt.labels, labelsOf(fams, tt.family))
			}
			if got := value(s); got != tt.want {
				t.Errorf("%s%v = %v, want %v", tt.family, tt.labels, got, tt.want)
			}
			if h := s.GetHistogram(); h != nil {
				if got := h.GetSampleSum(); got < tt.sum-1e-9 || got > tt.sum+1e-9 {
					t.Errorf("%s%v sum = %v s, want %v s", tt.family, tt.labels, got, tt.sum)
				}
			}
			if help := fams[tt.family].GetHelp(); help == "" {
				t.Errorf("%s has no help string", tt.family)
			}
		})
	}
}

// TestPreinitialized: the label values given at construction are series
// at 0 from the first scrape on, and the families are there with them.
func TestPreinitialized(t *testing.T) {
	c := metrics.NewCounters(metrics.Labels{
		EventKinds:       []string{"call", "messages.update"},
		DeliveryOutcomes: []string{"delivered", "retry", "gone"},
		SendKinds:        []string{"text", "image"},
		SendOutcomes:     []string{"sent", "internal"},
	})
	fams := scrape(t, metrics.New(metrics.Options{Counters: c}).Handler())
	want := map[string][]string{
		"wagraph_events_stored_total":               {"kind=call", "kind=messages.update"},
		"wagraph_webhook_deliveries_total":          {"outcome=delivered", "outcome=gone", "outcome=retry"},
		"wagraph_webhook_delivery_duration_seconds": {"outcome=delivered", "outcome=gone", "outcome=retry"},
		"wagraph_sends_total":                       {"kind=image,outcome=internal", "kind=image,outcome=sent", "kind=text,outcome=internal", "kind=text,outcome=sent"},
		"wagraph_subscribers":                       {""},
	}
	for fam, labels := range want {
		if got := labelsOf(fams, fam); strings.Join(got, " ") != strings.Join(labels, " ") {
			t.Errorf("%s series %q, want %q", fam, got, labels)
		}
		for _, s := range fams[fam].GetMetric() {
			if v := value(s); v != 0 {
				t.Errorf("%s: a series is %v before any call, want 0", fam, v)
			}
		}
	}
}

// TestRuntimeFamilies: the Go runtime and process collectors are there.
func TestRuntimeFamilies(t *testing.T) {
	fams := scrape(t, metrics.New(metrics.Options{}).Handler())
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "process_resident_memory_bytes", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("no family %s", name)
		}
	}
	if g := series(fams, "go_goroutines", map[string]string{}); g == nil || value(g) < 1 {
		t.Errorf("go_goroutines = %v, want at least 1", g)
	}
}

// TestOwnRegistry: two servers' metrics count apart; nothing is shared.
func TestOwnRegistry(t *testing.T) {
	ca, cb := metrics.NewCounters(metrics.Labels{}), metrics.NewCounters(metrics.Labels{})
	a, b := metrics.New(metrics.Options{Counters: ca}), metrics.New(metrics.Options{Counters: cb})
	ca.Sent("text", "sent")
	if s := series(scrape(t, a.Handler()), "wagraph_sends_total", map[string]string{"kind": "text", "outcome": "sent"}); s == nil || value(s) != 1 {
		t.Fatalf("a: sends_total{text,sent} = %v, want 1", s)
	}
	if s := series(scrape(t, b.Handler()), "wagraph_sends_total", map[string]string{"kind": "text", "outcome": "sent"}); s != nil {
		t.Errorf("b counts a's send: %v", s)
	}
}

type fakeSessions struct {
	mu     sync.Mutex
	counts map[string]int
	err    error
}

func (f *fakeSessions) set(counts map[string]int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts, f.err = counts, err
}

func (f *fakeSessions) SessionsByStatus(ctx context.Context) (map[string]int, error) {
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("no deadline: a stuck database would hang the scrape")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts, f.err
}

type fakeVersion struct{ v string }

func (f *fakeVersion) String() string { return f.v }

// TestStateReadAtScrape: sessions by status and the version are what their
// sources say at each scrape; a source that fails leaves its family out,
// is logged, and the rest is still served.
func TestStateReadAtScrape(t *testing.T) {
	sessions := &fakeSessions{}
	version := &fakeVersion{v: "2.3000.1"}
	logger, logs := logtest.New(nil)
	m := metrics.New(metrics.Options{Sessions: sessions, Version: version, Logger: logger})

	sessions.set(map[string]int{"CONNECTED": 2, "DISCONNECTED": 0, "PAIRING": 1}, nil)
	fams := scrape(t, m.Handler())
	for status, want := range map[string]float64{"CONNECTED": 2, "DISCONNECTED": 0, "PAIRING": 1} {
		if s := series(fams, "wagraph_sessions", map[string]string{"status": status}); s == nil || value(s) != want {
			t.Errorf("sessions{status=%s} = %v, want %v", status, s, want)
		}
	}
	if got := labelsOf(fams, "wagraph_whatsapp_version_info"); strings.Join(got, " ") != "version=2.3000.1" {
		t.Errorf("version_info series %q, want version=2.3000.1", got)
	}

	sessions.set(map[string]int{"CONNECTED": 3, "DISCONNECTED": 0, "PAIRING": 0}, nil)
	version.v = "2.3000.2"
	fams = scrape(t, m.Handler())
	if s := series(fams, "wagraph_sessions", map[string]string{"status": "CONNECTED"}); s == nil || value(s) != 3 {
		t.Errorf("after a change, sessions{status=CONNECTED} = %v, want 3", s)
	}
	if s := series(fams, "wagraph_whatsapp_version_info", map[string]string{"version": "2.3000.2"}); s == nil || value(s) != 1 {
		t.Errorf("after a change, version_info{version=2.3000.2} = %v, want 1; series %q", s, labelsOf(fams, "wagraph_whatsapp_version_info"))
	}

	sessions.set(nil, errors.New("database is locked"))
	fams = scrape(t, m.Handler())
	if fams["wagraph_sessions"] != nil {
		t.Errorf("a failed read still shows sessions: %v", labelsOf(fams, "wagraph_sessions"))
	}
	if fams["go_goroutines"] == nil || fams["wagraph_whatsapp_version_info"] == nil {
		t.Errorf("a failed read of the sessions took other families down")
	}
	if len(logs.Lines(`"level":"ERROR"`, "database is locked")) == 0 {
		t.Errorf("the failed read was not logged at error:\n%s", logs)
	}
}

// TestMiddleware: requests are counted by the pattern that matched and
// their status, never the raw path; a nested mux reports its own pattern;
// a panic counts as 500; a hijacked connection as 101.
func TestMiddleware(t *testing.T) {
	c := metrics.NewCounters(metrics.Labels{})
	m := metrics.New(metrics.Options{Counters: c})
	inner := http.NewServeMux()
	inner.HandleFunc("POST /things/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) { http.NewResponseController(w).Flush() })
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack through the middleware: %v", err)
			return
		}
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n")
		_ = rw.Flush()
		_ = conn.Close()
	})
	// The REST shape: the inner mux behind StripPrefix and a middleware
	// that copies the request.
	mux.Handle("/api/v1/", http.StripPrefix("/api/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.Nested("/api/v1", inner).ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), struct{}{}, 1)))
	})))
	// served is told when the middleware has returned: a client can have
	// its answer (a hijacked connection closed) before the count is made.
	var served sync.WaitGroup
	recovered := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer served.Done()
		defer func() {
			if recover() != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		c.Middleware(mux).ServeHTTP(w, r)
	})
	srv := httptest.NewServer(recovered)
	defer srv.Close()

	requests := []struct{ method, path string }{
		{"GET", "/items/1"}, {"GET", "/items/2"}, {"GET", "/items/missing"},
		{"POST", "/items/1"}, {"GET", "/nope/secret-token-in-path"},
		{"POST", "/api/v1/things/7"}, {"POST", "/api/v1/things/8"}, {"GET", "/api/v1/unknown"},
		{"GET", "/stream"}, {"GET", "/panic"}, {"GET", "/hijack"},
	}
	served.Add(len(requests))
	for _, rq := range requests {
		req, _ := http.NewRequest(rq.method, srv.URL+rq.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rq.method, rq.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	served.Wait()
	fams := scrape(t, m.Handler())
	want := map[[2]string]float64{
		{"GET /items/{id}", "200"}:          2,
		{"GET /items/{id}", "404"}:          1,
		{"unmatched", "405"}:                1,
		{"unmatched", "404"}:                1,
		{"POST /api/v1/things/{id}", "201"}: 2,
		{"/api/v1/", "404"}:                 1,
		{"/stream", "200"}:                  1,
		{"/panic", "500"}:                   1,
		{"/hijack", "101"}:                  1,
	}
	var total float64
	for k, n := range want {
		s := series(fams, "wagraph_http_requests_total", map[string]string{"route": k[0], "status": k[1]})
		if s == nil || value(s) != n {
			t.Errorf("http_requests_total{route=%q,status=%s} = %v, want %v", k[0], k[1], s, n)
		}
		total += n
	}
	if got := len(fams["wagraph_http_requests_total"].GetMetric()); got != len(want) {
		t.Errorf("http_requests_total has %d series, want %d: %q", got, len(want), labelsOf(fams, "wagraph_http_requests_total"))
	}
	var observed float64
	for _, s := range fams["wagraph_http_request_duration_seconds"].GetMetric() {
		observed += value(s)
	}
	if observed != total {
		t.Errorf("http_request_duration_seconds observed %v requests, want %v", observed, total)
	}
	var text bytes.Buffer
	for _, l := range labelsOf(fams, "wagraph_http_requests_total") {
		text.WriteString(l)
	}
	for _, raw := range []string{"secret-token-in-path", "/items/1", "/things/7", "unknown"} {
		if strings.Contains(text.String(), raw) {
			t.Errorf("a raw path %q is a label value: %s", raw, text.String())
		}
	}
}
