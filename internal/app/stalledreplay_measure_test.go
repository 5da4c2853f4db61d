package app_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

// TestMeasureStalledReplays measures what 80 replays to sockets that never
// read make the server hold (issue 21, finding 4): the heap's peak over a
// baseline while 5 sockets that never read each start 16
// subscriptions replaying 300 stored events of 32 KiB, and how many the
// server took. A measurement, not a check: it runs with WAGRAPH_MEASURE=1
// and only logs (BENCHMARKS.md keeps the numbers). It uses nothing newer
// than the server's public surface, so it runs on older code as well.
func TestMeasureStalledReplays(t *testing.T) {
	if os.Getenv("WAGRAPH_MEASURE") == "" {
		t.Skip("a measurement: WAGRAPH_MEASURE=1 runs it")
	}
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "stalled replays")
	big := `{"text":"` + strings.Repeat("x", 32<<10) + `"}`
	var first string
	for i := range 300 {
		envs, err := srv.App.Bus().Publish(context.Background(), sid, []events.New{{Kind: events.MessagesUpdate, Data: []byte(big)}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = envs[0].ID
		}
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	for range 5 {
		c := dialGraphQL(t, srv, "graphql-transport-ws", nil)
		send(t, c, `{"type":"connection_init","payload":{"Authorization":"`+apptest.AdminToken+`"}}`)
		for i := range 16 {
			send(t, c, fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription($s: ID!, $a: String) { events(sessionId: $s, after: $a) { id data } }","variables":{"s":%q,"a":%q}}}`, i, sid, first))
		}
	}
	time.Sleep(8 * time.Second)
	close(stop)
	<-sampled
	t.Logf("subscriptions the server holds: %d; heap in use at its peak: %d MiB over the %d MiB before",
		srv.App.Bus().Subscribers(), (peak.Load()-min(peak.Load(), base.HeapInuse))>>20, base.HeapInuse>>20)
}
