package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/memtest"
)

// BenchmarkStalledReplays is what 80 replays to sockets that never read
// make the server hold (issue 21, finding 4): 5 sockets each start 16
// subscriptions replaying 300 stored events of 32 KiB, and are never read.
// It reports the heap's peak above what it was before, and how many
// subscriptions the server took. It uses nothing newer than the server's
// public surface, so it runs on older code as well. BENCHMARKS.md keeps
// the figures:
//
//	go test -run '^$' -bench StalledReplays -benchtime 1x ./internal/app/
func BenchmarkStalledReplays(b *testing.B) {
	srv := apptest.Start(b, apptest.Config(b))
	sid := srv.CreateSession(b, "stalled replays")
	big := `{"text":"` + strings.Repeat("x", 32<<10) + `"}`
	var first string
	for i := range 300 {
		envs, err := srv.App.Bus().Publish(context.Background(), sid, []events.New{{Kind: events.MessagesUpdate, Data: []byte(big)}})
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			first = envs[0].ID
		}
	}
	ws := "ws" + strings.TrimPrefix(srv.URL, "http") + "/graphql"
	var peak uint64
	held := 0
	for b.Loop() {
		done := memtest.Watch(20 * time.Millisecond)
		var conns []*websocket.Conn
		for range 5 {
			d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
			c, _, err := d.Dial(ws, nil)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
			msgs := []string{`{"type":"connection_init","payload":{"Authorization":"` + apptest.AdminToken + `"}}`}
			for i := range 16 {
				msgs = append(msgs, fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription($s: ID!, $a: String) { events(sessionId: $s, after: $a) { id data } }","variables":{"s":%q,"a":%q}}}`, i, sid, first))
			}
			for _, m := range msgs {
				if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
					b.Fatal(err)
				}
			}
		}
		time.Sleep(8 * time.Second)
		held = srv.App.Bus().Subscribers()
		peak = max(peak, done())
		for _, c := range conns {
			c.Close()
		}
	}
	b.ReportMetric(float64(peak>>20), "peak-heap-MiB")
	b.ReportMetric(float64(held), "subscriptions-held")
}
