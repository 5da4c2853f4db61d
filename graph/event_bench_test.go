package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

// BenchmarkEventsFanout: events published to a session followed by 100
// graphql-transport-ws subscribers of a whole server (httptest on loopback,
// a real SQLite), from the publish to the frame each subscriber reads: the
// bus's fan-out, gqlgen's execution of the subscription for each
// subscriber, the frame and its write. An op is one append of 10 events (one
// commit: the figure is the fan-out's, not SQLite's); ns/delivery is the
// time of one event to one subscriber. The clients only count frames
// (no JSON decoding), so that the figures are the server's: allocs/op
// includes the clients' one buffer per frame. The publisher waits whenever
// a subscriber is more than 64 events behind, far within the bus's
// buffer: the benchmark fails if one is cut off.
func BenchmarkEventsFanout(b *testing.B) {
	const subscribers = 100
	s := apptest.Start(b, apptest.Config(b))
	sess := s.CreateSession(b, "fanout")
	query := `subscription($s: ID!) { events(sessionId: $s, kinds: [INBOUND_MESSAGE_UPSERT]) { id seq kind occurredAt data } }`
	var (
		received [subscribers]atomic.Int64
		failed   atomic.Value
		wg       sync.WaitGroup
	)
	conns := make([]*websocket.Conn, subscribers)
	for i := range conns {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		c, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		for _, m := range []any{
			map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": apptest.AdminToken}},
			map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": map[string]any{"s": sess}}},
		} {
			if err := c.WriteJSON(m); err != nil {
				b.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				switch {
				case bytes.Contains(msg, []byte(`"errors"`)), bytes.Contains(msg, []byte(`"type":"complete"`)), bytes.Contains(msg, []byte(`"type":"error"`)):
					failed.Store(string(msg))
					return
				case bytes.Contains(msg, []byte(`"type":"next"`)):
					received[i].Add(1)
				case bytes.Contains(msg, []byte(`"type":"ping"`)):
					// Unanswered, the server ends the connection.
					if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"pong"}`)); err != nil {
						failed.Store("pong: " + err.Error())
						return
					}
				}
			}
		}()
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()
	for deadline := time.Now().Add(10 * time.Second); s.App.Bus().Subscribers() < subscribers; {
		if time.Now().After(deadline) {
			b.Fatalf("%d subscribers registered, want %d", s.App.Bus().Subscribers(), subscribers)
		}
		time.Sleep(5 * time.Millisecond)
	}
	data := json.RawMessage(`{"id":"3EB0C767D26A1D3A3F8E","chat":"491701234567@s.whatsapp.net","sender":"491701234567@s.whatsapp.net",` +
		`"fromMe":false,"pushName":"Anna","timestamp":"2026-01-02T03:04:05.000Z","type":"text","text":"Bis morgen um zehn am Bahnhof?"}`)
	ctx := context.Background()
	slowest := func() int64 {
		least := received[0].Load()
		for i := range received {
			least = min(least, received[i].Load())
		}
		return least
	}
	wait := func(n int64) {
		deadline := time.Now().Add(time.Minute)
		for slowest() < n {
			if f := failed.Load(); f != nil {
				b.Fatalf("a subscriber's stream ended: %s", f)
			}
			if time.Now().After(deadline) {
				b.Fatalf("subscribers have %d of %d events after a minute", slowest(), n)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	const batch = 10
	evs := make([]events.New, batch)
	for i := range evs {
		evs[i] = events.New{Kind: events.InboundMessageUpsert, Data: data}
	}
	var sent int64
	for b.Loop() {
		if _, err := s.App.Bus().Publish(ctx, sess, evs); err != nil {
			b.Fatal(err)
		}
		sent += batch
		wait(sent - 64)
	}
	wait(sent)
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sent*subscribers), "ns/delivery")
}
