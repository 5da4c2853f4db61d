// Package metrics is what /metrics shows (operations.md, "Endpoints served"):
// sessions by status, events stored by kind, webhook deliveries by outcome
// with their latency, live subscribers, sends by kind and outcome, HTTP
// requests by route and status with their latency, the WhatsApp Web version
// in use, and the Go runtime and process figures, in Prometheus' text format.
//
// It comes in two halves, because they are built at two ends of the server's
// construction. The Counters come first: the parts that count are handed
// them and call their hooks (EventStored, DeliveryAttempted, Sent, …). The
// Metrics come last: what is state rather than a count (sessions, the
// version) is read from the parts that hold it, through small interfaces at
// scrape time, so it cannot drift from the truth, and those parts must exist
// to be handed to New.
//
// A Metrics owns its own registry: nothing is registered globally, so two
// servers in one test process never share or collide on a series.
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

// Options are what a Metrics shows; a nil one leaves its families out.
type Options struct {
	// Counters are what the parts counted (NewCounters).
	Counters *Counters
	// Sessions and Version are read at every scrape.
	Sessions SessionCounter
	Version  fmt.Stringer // the WhatsApp Web version announced now: 2.3000.N
	// ScrapeTimeout bounds the reads of Sessions at one scrape; 0 is 5 s.
	ScrapeTimeout time.Duration
	Logger        *slog.Logger // nil discards
}

// Metrics serves wagraph's metrics.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger
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
	m := &Metrics{reg: prometheus.NewRegistry(), log: opts.Logger}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if opts.Counters != nil {
		m.reg.MustRegister(opts.Counters.collectors()...)
	}
	if opts.Sessions != nil {
		m.reg.MustRegister(&sessionsCollector{src: opts.Sessions, timeout: opts.ScrapeTimeout})
	}
	if opts.Version != nil {
		m.reg.MustRegister(&versionCollector{src: opts.Version})
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

// scrapeLog is promhttp's error log on the service's logger.
type scrapeLog struct{ log *slog.Logger }

func (l scrapeLog) Println(v ...any) {
	l.log.Error("metrics: a family could not be collected", "err", fmt.Sprint(v...))
}
