package ingest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// plainBus hides the bus's PublishWith: the sink then records a message
// in the message and chat stores' own transactions before the event's
// (the path before issue 35), for the before/after in one run.
type plainBus struct{ bus *events.Bus }

func (p plainBus) Publish(ctx context.Context, id string, evs []events.New) ([]events.Envelope, error) {
	return p.bus.Publish(ctx, id, evs)
}

// BenchmarkSinkInbound: inbound texts through the sink as the server
// stores them (message store, chat store, event log with a webhook's
// delivery row per text) from 32 sessions at once, each its own
// goroutine in order, as whatsmeow's handlers hand them over; 4 contacts
// a session. Reports the process's CPU per text (user + system, from
// getrusage: the figure of goal 3, for the store path alone) and the
// event log's texts per commit. The stores take concurrent writers on
// PostgreSQL, as the server builds them (app.go: cfg.Clustered()).
func BenchmarkSinkInbound(b *testing.B) {
	for _, path := range []string{"one-transaction", "separate-transactions"} {
		b.Run(path, func(b *testing.B) {
			ctx := context.Background()
			db := dbtest.Open(b).Ent
			db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
			const sessions = 32
			for i := range sessions {
				s := fmt.Sprintf("s%d", i)
				db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
				db.Webhook.Create().SetID("w-" + s).SetSessionID(s).SetURL("https://example.com/").
					SetEvents([]string{string(events.InboundMessageUpsert)}).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
			}
			l := events.NewLog(db, events.LogOptions{})
			b.Cleanup(func() { l.Close() })
			var bus Bus = events.NewBus(l, events.BusOptions{})
			if path == "separate-transactions" {
				bus = plainBus{events.NewBus(l, events.BusOptions{})}
			}
			pg := dbtest.Postgres(b)
			sink := NewSink(SinkOptions{Bus: bus, Messages: messaging.NewStore(db, pg), Chats: chats.NewStore(db, pg, nil)})
			var next atomic.Int64
			before := cpuTime()
			stats := l.Stats()
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := range sessions {
				wg.Go(func() {
					s := fmt.Sprintf("s%d", i)
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						chat := fmt.Sprintf("49155500%05d@s.whatsapp.net", i*4+int(n%4))
						id := fmt.Sprintf("3EB0%016X", n)
						ev := benchText(id, chat)
						if err := sink.Publish(ctx, s, ev); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			after := l.Stats()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/text")
			b.ReportMetric(float64(after.Events-stats.Events)/float64(max(after.Batches-stats.Batches, 1)), "events/commit")
		})
	}
}

// benchText is an inbound text as the adapter hands it over.
func benchText(id, chat string) whatsapp.Event {
	ts := time.Now().UTC().Truncate(time.Second)
	return whatsapp.Event{Kind: whatsapp.KindInboundMessage, Key: "inbound-message.upsert/" + chat + "/" + chat + "/" + id,
		Data: &payload.Message{ID: id, Chat: chat, Sender: chat, PushName: "Alice",
			Timestamp: payload.At(ts), Type: "text", Text: "hello from the load"},
		Message: &whatsapp.Message{ID: id, Chat: chat, Sender: chat, Type: "text", Text: "hello from the load", Timestamp: ts}}
}

// cpuTime is the process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
