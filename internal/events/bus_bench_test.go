package events

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// BenchmarkEnvelopeMarshal: the wire form of one envelope, as a webhook
// body and a subscription payload are written.
func BenchmarkEnvelopeMarshal(b *testing.B) {
	env := Envelope{
		ID: "evt_01JGZ8Q6ZK3VY5R0M8T2W4N6P9", Seq: 4711, Kind: InboundMessageUpsert, SessionID: "ses_01JGZ8Q6ZK3VY5R0M8T2W4N6P9",
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC),
		Data: data(`{"id":"3EB0C767D26A1D3A3F8E","chat":"491701234567@s.whatsapp.net","sender":"491701234567@s.whatsapp.net",` +
			`"fromMe":false,"pushName":"Anna","timestamp":"2026-01-02T03:04:05.000Z","type":"text","text":"Bis morgen um zehn am Bahnhof?"}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublish: one event published (stored in its own transaction,
// no webhook) and delivered to every live subscriber of its session; an
// op ends when the publisher has it back, and the timer stops only once
// every subscriber has read every event. Buffers are large enough that no
// subscriber is cut off: the benchmark fails if one is.
func BenchmarkPublish(b *testing.B) {
	body := data(`{"id":"3EB0C767D26A1D3A3F8E","chat":"491701234567@s.whatsapp.net","type":"text","text":"hello"}`)
	for _, n := range []int{0, 1, 10, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bus := newBus(b, []string{"s1"}, BusOptions{Buffer: b.N + 1})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			for range n {
				s, err := bus.Subscribe(ctx, "s1", nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					defer s.Close()
					for range b.N {
						if _, err := s.Next(ctx); err != nil {
							b.Errorf("subscriber: %v", err)
							return
						}
					}
				})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := bus.Publish(ctx, "s1", []New{{Kind: InboundMessageUpsert, Data: body}}); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		})
	}
}
