package bench

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestInboundNATSReport: both sides' figures side by side, the ratio
// column the median of each round's on / off ratio (not the ratio of the
// medians), the sink's own figures on its side only.
func TestInboundNATSReport(t *testing.T) {
	win := func(cpu, natsCPU time.Duration, texts int, catchUp time.Duration) natsWindow {
		w := natsWindow{NATSCPU: natsCPU, CatchUp: catchUp, Published: float64(texts)}
		w.Sent, w.Unique, w.InWindow, w.Window = texts, texts, texts, 10*time.Second
		w.ServerCPU = cpu
		w.Load = "1.00 1.00 1.00"
		return w
	}
	off := &natsSide{windows: []natsWindow{
		win(10*time.Second, 0, 1000, 0), // 10,000 µs a text
		win(4*time.Second, 0, 1000, 0),  // 4,000
		win(6*time.Second, 0, 1000, 0),  // 6,000
	}}
	on := &natsSide{on: true, windows: []natsWindow{
		win(11*time.Second, time.Second, 1000, 200*time.Millisecond),        // ratio 1.10
		win(6*time.Second, time.Second, 1000, 100*time.Millisecond),         // 1.50
		win(7200*time.Millisecond, time.Second, 1000, 300*time.Millisecond), // 1.20
	}}
	var b strings.Builder
	writeInboundNATSReport(&b, []*natsSide{off, on}, "", Options{InboundSessions: 100, Rounds: 3, InboundRate: 100, InboundBurst: 5,
		InboundDuration: 10 * time.Second, InboundDrain: 30 * time.Second})
	report := b.String()
	for _, want := range []string{
		"| Figure: median (min–max) | sink off | sink on | on / off, median of the rounds' ratios (min–max) |",
		// The medians' ratio would be 7,200 / 6,000 = 1.20 as well; the
		// spread shows the rounds' ratios: 1.10, 1.20, 1.50.
		"| server CPU per text (µs) | 6000 (4000–10000) | 7200 (6000–11000) | 1.20 (1.10–1.50) |",
		"| nats-server CPU per text (µs) | – | 1000 (1000–1000) | – |",
		"| server + nats-server CPU per text (µs) | 6000 (4000–10000) | 8200 (7000–12000) | 1.37 (1.20–1.75) |",
		"| stream caught up after the drain (ms) | – | 200 (100–300) | – |",
		"| events published per text | – | 1.00 (1.00–1.00) | – |",
		"| delivered texts/s (first arrivals in the window) | 100 (100–100) | 100 (100–100) | 1.00 (1.00–1.00) |",
		"sink on, over its 3 windows: lost 0, duplicates 0, texts the network refused 0, foreign arrivals 0, failed publishes 0.",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}

	// A round cut short: only the rounds with both windows make ratios.
	on.windows = on.windows[:2]
	b.Reset()
	writeInboundNATSReport(&b, []*natsSide{off, on}, "round 3's window with the sink on did not drain", Options{Rounds: 3})
	if want := "| server CPU per text (µs) | 6000 (4000–10000) | 8500 (6000–11000) | 1.30 (1.10–1.50) |"; !strings.Contains(b.String(), want) {
		t.Errorf("the report of a run cut short lacks %q:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "Stopped early: round 3's window") {
		t.Errorf("the report of a run cut short does not say so:\n%s", b.String())
	}

	// -inbound-nats on: the sink's side alone, no ratio column.
	b.Reset()
	writeInboundNATSReport(&b, []*natsSide{on}, "", Options{Rounds: 2})
	for _, want := range []string{
		"| Figure: median (min–max) | sink on |\n|---|---:|\n",
		"| server CPU per text (µs) | 8500 (6000–11000) |\n",
		"| nats-server CPU per text (µs) | 1000 (1000–1000) |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report of the sink alone lacks %q:\n%s", want, b.String())
		}
	}
}

// TestInboundNATSMode: a value of -inbound-nats it does not know is an
// error naming the flag and the values, before anything starts.
func TestInboundNATSMode(t *testing.T) {
	err := Run(context.Background(), Options{Rounds: 1, Conns: 1, Duration: time.Second, InboundNATS: "yes"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-inbound-nats") || !strings.Contains(err.Error(), "off, on, both") {
		t.Errorf("Run with -inbound-nats yes: %v, want an error naming the flag and its values", err)
	}
}
