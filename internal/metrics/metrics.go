// Package metrics is what /metrics shows (operations.md, "Endpoints served"):
// sessions by status, events stored by kind, webhook deliveries by outcome
// with their latency, live subscribers, sends by kind and outcome, HTTP
// requests by route and status with their latency, the WhatsApp Web version
// in use, and the Go runtime and process figures, in Prometheus' text format.
//
// A Metrics owns its own registry: nothing is registered globally, so two
// servers in one test process never share or collide on a series. The parts
// that count call its hooks (EventStored, DeliveryAttempted, Sent, …); what
// is state rather than a count (sessions, the version) is read through small
// interfaces at scrape time, so it cannot drift from the truth.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of wagraph's own.
const Namespace = "wagraph"

// SessionCounter counts the sessions by status ("CONNECTED" → 2), read at
// every scrape. Every status the service knows should be present, with 0
// when no session has it, so a series does not vanish when it empties.
type SessionCounter interface {
	SessionsByStatus(ctx context.Context) (map[string]int, error)
}

// Options configure a Metrics.
type Options struct {
	// Sessions and Version are read at every scrape; nil leaves their
	// family out.
	Sessions SessionCounter
	Version  fmt.Stringer // the WhatsApp Web version announced now: 2.3000.N
	// EventKinds, DeliveryOutcomes and SendKinds/SendOutcomes are the label
	// values shown at 0 before anything has been counted: a dashboard and
	// rate() see the series from the first scrape on.
	EventKinds       []string
	DeliveryOutcomes []string
	SendKinds        []string
	SendOutcomes     []string
	// ScrapeTimeout bounds the reads of Sessions at one scrape; 0 is 5 s.
	ScrapeTimeout time.Duration
	Logger        *slog.Logger // nil discards
}

// Metrics holds wagraph's metrics and serves them.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	eventsStored     *prometheus.CounterVec
	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	subscribers      prometheus.Gauge
	sends            *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	storeFailures    prometheus.Counter
	undecryptable    prometheus.Counter
}

// New builds the metrics on a registry of their own, with the Go runtime and
// process collectors.
func New(opts Options) *Metrics {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ScrapeTimeout <= 0 {
		opts.ScrapeTimeout = 5 * time.Second
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		log: opts.Logger,
		eventsStored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "events_stored_total",
			Help: "Events written to the event log, by kind (events.md).",
		}, []string{"kind"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome: delivered (2xx), retry (anything else; tried again on --webhook-retry), failed (anything else at the last attempt of --webhook-retry), gone (410; the webhook is disabled).",
		}, []string{"outcome"}),
		deliveryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "webhook_delivery_duration_seconds",
			Help:    "How long one webhook delivery attempt took (signing, connecting, the request and the receiver's answer; up to --webhook-timeout), by outcome.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15, 30, 60},
		}, []string{"outcome"}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "subscribers",
			Help: "Event subscriptions streaming now (GraphQL over websocket or SSE).",
		}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sends_total",
			Help: "Message sends through the API and the scheduler, by kind (text, image, …) and outcome: sent, scheduled (stored for later; counted again as sent or failed when it is made), or the failure's error code in lower case (bad_user_input, not_connected, whatsapp_error, internal, …).",
		}, []string{"kind", "outcome"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route (the pattern that matched, such as \"POST /api/v1/session/{sessionId}/message/text\"; \"unmatched\" for none) and status.",
		}, []string{"route", "status"}),
		storeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "store_failures_total",
			Help: "Failed writes of a session's events or status, and failed calls of its device store while a stanza was handled: the stanza is left unacknowledged for WhatsApp to deliver again, and the session drops and reconnects once the database can be written.",
		}),
		undecryptable: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "undecryptable_messages_total",
			Help: "Messages that arrived and could not be decrypted (each a messages.update with status failed; the sender is asked to send it again).",
		}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "How long HTTP requests took, by route, until the handler returned (a websocket or SSE stream: its whole life).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.eventsStored, m.deliveries, m.deliveryDuration, m.subscribers, m.sends,
		m.httpRequests, m.httpDuration, m.storeFailures, m.undecryptable,
	)
	if opts.Sessions != nil {
		m.reg.MustRegister(&sessionsCollector{src: opts.Sessions, timeout: opts.ScrapeTimeout})
	}
	if opts.Version != nil {
		m.reg.MustRegister(&versionCollector{src: opts.Version})
	}
	for _, k := range opts.EventKinds {
		m.eventsStored.WithLabelValues(k)
	}
	for _, o := range opts.DeliveryOutcomes {
		m.deliveries.WithLabelValues(o)
		m.deliveryDuration.WithLabelValues(o)
	}
	for _, k := range opts.SendKinds {
		for _, o := range opts.SendOutcomes {
			m.sends.WithLabelValues(k, o)
		}
	}
	return m
}

// Handler serves the metrics in Prometheus' text format. A family that
// cannot be read (the sessions' store failing) is left out and logged; the
// others are still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      scrapeLog{m.log},
		ErrorHandling: promhttp.ContinueOnError,
		// One scrape at a time is plenty; more only load the database.
		MaxRequestsInFlight: 4,
	})
}

// EventStored counts one event written to the log. kind comes from the
// kind table (never from a request), which bounds the series.
func (m *Metrics) EventStored(kind string) { m.eventsStored.WithLabelValues(kind).Inc() }

// DeliveryAttempted counts one webhook delivery attempt and how long it
// took. outcome is what the attempt made of its delivery (webhook.Outcomes).
func (m *Metrics) DeliveryAttempted(outcome string, took time.Duration) {
	m.deliveries.WithLabelValues(outcome).Inc()
	m.deliveryDuration.WithLabelValues(outcome).Observe(took.Seconds())
}

// SubscriberStarted counts a subscription that began streaming; every
// call is matched by one SubscriberEnded when it ends.
func (m *Metrics) SubscriberStarted() { m.subscribers.Inc() }

// SubscriberEnded counts a subscription that ended.
func (m *Metrics) SubscriberEnded() { m.subscribers.Dec() }

// StoreFailed counts a failed device store call (whatsapp.Observer).
func (m *Metrics) StoreFailed() { m.storeFailures.Inc() }

// Undecryptable counts a message that could not be decrypted.
func (m *Metrics) Undecryptable() { m.undecryptable.Inc() }

// Sent counts one send by kind and outcome (see the help of sends_total).
func (m *Metrics) Sent(kind, outcome string) { m.sends.WithLabelValues(kind, outcome).Inc() }

// scrapeLog is promhttp's error log on the service's logger.
type scrapeLog struct{ log *slog.Logger }

func (l scrapeLog) Println(v ...any) {
	l.log.Error("metrics: a family could not be collected", "err", fmt.Sprint(v...))
}
