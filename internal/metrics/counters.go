package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Counters are what the parts of the server count as they work: events
// stored, webhook delivery attempts and their latency, live subscribers,
// sends, HTTP requests and their latency, store failures and undecryptable
// messages. They are built before those parts, which are handed them as
// their observer; the Metrics that shows them is built last, once the
// sources of the state it reads at scrape time exist (New).
type Counters struct {
	eventsStored     *prometheus.CounterVec
	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	subscribers      prometheus.Gauge
	sends            *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	storeFailures    prometheus.Counter
	undecryptable    prometheus.Counter
	streamPublished  prometheus.Counter
	streamFailures   prometheus.Counter
	streamLag        prometheus.Gauge
}

// Labels are the label values shown at 0 before anything has been counted:
// a dashboard and rate() see the series from the first scrape on.
type Labels struct {
	EventKinds       []string
	DeliveryOutcomes []string
	SendKinds        []string // each with every one of SendOutcomes
	SendOutcomes     []string
}

// NewCounters builds the counters, each label value of labels at 0.
func NewCounters(labels Labels) *Counters {
	c := &Counters{
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
		streamPublished: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "nats_published_total",
			Help: "Events published to the NATS JetStream stream and acknowledged by it (--nats-url), by this process.",
		}),
		streamFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "nats_publish_failures_total",
			Help: "Publishes to the NATS JetStream stream that failed (no ack in time, broker gone, stream refused): each event is published again, in order, after a backoff.",
		}),
		streamLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "nats_lag_events",
			Help: "Events stored and not yet acknowledged by the NATS JetStream stream, of the sessions this process holds.",
		}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "How long HTTP requests took, by route, until the handler returned (a websocket or SSE stream: its whole life).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	for _, k := range labels.EventKinds {
		c.eventsStored.WithLabelValues(k)
	}
	for _, o := range labels.DeliveryOutcomes {
		c.deliveries.WithLabelValues(o)
		c.deliveryDuration.WithLabelValues(o)
	}
	for _, k := range labels.SendKinds {
		for _, o := range labels.SendOutcomes {
			c.sends.WithLabelValues(k, o)
		}
	}
	return c
}

// collectors are the families New registers.
func (c *Counters) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		c.eventsStored, c.deliveries, c.deliveryDuration, c.subscribers, c.sends,
		c.httpRequests, c.httpDuration, c.storeFailures, c.undecryptable,
		c.streamPublished, c.streamFailures, c.streamLag,
	}
}

// EventStored counts one event written to the log. kind comes from the
// kind table (never from a request), which bounds the series.
func (c *Counters) EventStored(kind string) { c.eventsStored.WithLabelValues(kind).Inc() }

// DeliveryAttempted counts one webhook delivery attempt and how long it
// took. outcome is what the attempt made of its delivery (webhook.Outcomes).
func (c *Counters) DeliveryAttempted(outcome string, took time.Duration) {
	c.deliveries.WithLabelValues(outcome).Inc()
	c.deliveryDuration.WithLabelValues(outcome).Observe(took.Seconds())
}

// SubscriberStarted counts a subscription that began streaming; every
// call is matched by one SubscriberEnded when it ends.
func (c *Counters) SubscriberStarted() { c.subscribers.Inc() }

// SubscriberEnded counts a subscription that ended.
func (c *Counters) SubscriberEnded() { c.subscribers.Dec() }

// StoreFailed counts a failed device store call (whatsapp.Observer).
func (c *Counters) StoreFailed() { c.storeFailures.Inc() }

// Undecryptable counts a message that could not be decrypted.
func (c *Counters) Undecryptable() { c.undecryptable.Inc() }

// Sent counts one send by kind and outcome (see the help of sends_total).
func (c *Counters) Sent(kind, outcome string) { c.sends.WithLabelValues(kind, outcome).Inc() }

// StreamPublished counts one event the NATS stream acknowledged.
func (c *Counters) StreamPublished() { c.streamPublished.Inc() }

// StreamPublishFailed counts one failed publish to the NATS stream.
func (c *Counters) StreamPublishFailed() { c.streamFailures.Inc() }

// StreamLag sets the events not yet acknowledged by the NATS stream.
func (c *Counters) StreamLag(events int64) { c.streamLag.Set(float64(events)) }
