package events

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
)

// BenchmarkAppend: appends of one event each from parallel publishers
// across 8 sessions, each session with one webhook selecting the kind (so a
// delivery row is written too), against a SQLite file set up as the app's.
// Reports the events per transaction the batcher reached.
func BenchmarkAppend(b *testing.B) {
	for _, wait := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("wait=%s", wait), func(b *testing.B) {
			sessions := []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"}
			db := openDB(b, sessions...)
			ctx := context.Background()
			for _, s := range sessions {
				db.Webhook.Create().SetID("w-" + s).SetSessionID(s).SetURL("https://example.com/").
					SetEvents([]string{string(InboundMessageUpsert)}).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
			}
			l := newLog(b, db, LogOptions{MaxWait: wait})
			body := data(`{"id":"3EB0C767D26A1D3A3F8E","chat":"491701234567@s.whatsapp.net","type":"text","text":"hello"}`)
			var next atomic.Int64
			b.SetParallelism(8) // many sessions publish at once, as whatsmeow's handlers do
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				s := sessions[next.Add(1)%int64(len(sessions))]
				for pb.Next() {
					if _, err := l.Append(ctx, s, []New{{Kind: InboundMessageUpsert, Data: body}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			st := l.Stats()
			b.ReportMetric(float64(st.Events)/float64(max(st.Batches, 1)), "events/tx")
			b.ReportMetric(float64(st.Events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendLongLog: one append at a time to a session that already
// has prior events: an append's cost must not grow with the log (the last
// seq is read from the end of the session's index, not by walking it).
func BenchmarkAppendLongLog(b *testing.B) {
	for _, prior := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("prior=%d", prior), func(b *testing.B) {
			db := openDB(b, "s1", "s2")
			ctx := context.Background()
			now := time.Now()
			for start := 0; start < prior; start += 1000 {
				rows := make([]*ent.EventCreate, 0, 1000)
				for seq := start + 1; seq <= min(start+1000, prior); seq++ {
					rows = append(rows, db.Event.Create().SetID(fmt.Sprintf("evt_prior_%d", seq)).SetSessionID("s1").
						SetSeq(int64(seq)).SetKind(string(InboundMessageUpsert)).SetTimestamp(now).SetData(data(`{}`)))
				}
				for c := range slices.Chunk(rows, bulkRows) {
					db.Event.CreateBulk(c...).ExecX(ctx)
				}
			}
			l := newLog(b, db, LogOptions{})
			body := data(`{"id":"3EB0C767D26A1D3A3F8E","chat":"491701234567@s.whatsapp.net","type":"text","text":"hello"}`)
			// b.Loop runs the set-up above once, however many
			// iterations the timing needs.
			for b.Loop() {
				envs, err := l.Append(ctx, "s1", []New{{Kind: InboundMessageUpsert, Data: body}})
				if err != nil {
					b.Fatal(err)
				}
				if envs[0].Seq <= int64(prior) {
					b.Fatalf("seq %d after %d prior events", envs[0].Seq, prior)
				}
			}
		})
	}
}
