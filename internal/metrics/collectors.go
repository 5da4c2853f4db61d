package metrics

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// sessionsCollector reads the sessions by status at each scrape: a count
// kept by hooks would drift from the sessions' real state on any missed
// transition, a read cannot.
type sessionsCollector struct {
	src     SessionCounter
	timeout time.Duration
}

var sessionsDesc = prometheus.NewDesc(Namespace+"_sessions",
	"Sessions by status (DISCONNECTED, CONNECTING, PAIRING, CONNECTED, LOGGED_OUT), read at scrape time.",
	[]string{"status"}, nil)

func (c *sessionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- sessionsDesc }

func (c *sessionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.src.SessionsByStatus(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(sessionsDesc, fmt.Errorf("count sessions by status: %w", err))
		return
	}
	statuses := make([]string, 0, len(counts))
	for s := range counts {
		statuses = append(statuses, s)
	}
	sort.Strings(statuses)
	for _, s := range statuses {
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(counts[s]), s)
	}
}

// versionCollector shows the WhatsApp Web version announced now as an
// info metric: the value is always 1, the version is the label.
type versionCollector struct{ src fmt.Stringer }

var versionDesc = prometheus.NewDesc(Namespace+"_whatsapp_version_info",
	"The WhatsApp Web version the sessions announce now (--wa-version), as the label version; the value is always 1.",
	[]string{"version"}, nil)

func (c *versionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- versionDesc }

func (c *versionCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(versionDesc, prometheus.GaugeValue, 1, c.src.String())
}
