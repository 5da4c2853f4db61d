package events

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entevent "github.com/wagraph/wagraph/ent/event"
	"github.com/wagraph/wagraph/ent/predicate"
	"github.com/wagraph/wagraph/ent/streamcursor"
)

// Retention: how long the log keeps events (--event-retention), and what
// it keeps longer because someone still needs it.

// pruneChunk bounds how long one prune statement holds the write lock.
const pruneChunk = 1000

// StreamHold is how long past the retention an event the NATS stream has
// not taken yet is kept: the stream is published from this log
// (internal/natsstream), so an event pruned before the stream acknowledged
// it never reaches the stream. A broker away for a day or a weekend loses
// nothing; one that never comes back (or a stream that was configured and
// then forgotten) keeps the database growing for a week at most, after
// which the events go anyway and the prune logs how many the stream lost.
const StreamHold = 7 * 24 * time.Hour

// Cut is what a Prune deletes.
type Cut struct {
	// Before: the events stored before it go (retention).
	Before time.Time
	// Stream, when not "", names the NATS JetStream stream the log is
	// published to: an event past its session's cursor of that stream
	// (ent.StreamCursor; no cursor is seq 0) is not taken yet, and stays
	// until StreamBefore, however old.
	Stream       string
	StreamBefore time.Time
}

// Pruned is what a Prune deleted.
type Pruned struct {
	Events int // every event deleted
	// Unpublished are those of Events the stream (Cut.Stream) had not
	// taken: deleted because they were older than Cut.StreamBefore.
	Unpublished int
}

// Prune deletes the events cut says, with their finished deliveries. An
// event with a delivery still pending is kept, whatever its age: at least
// once outranks retention. So is each session's latest event: the next seq
// is read from it, and a session whose log emptied would count from 1 again
// under its subscribers' cursors. It deletes in chunks so it never holds
// the write lock for long.
func (l *Log) Prune(ctx context.Context, cut Cut) (Pruned, error) {
	var out Pruned
	if cut.Stream == "" {
		n, err := l.pruneWhere(ctx, cut.Before, nil)
		out.Events = n
		return out, err
	}
	// What the stream took goes at the retention; what it has not, at
	// the stream's hold (counted apart: those are the stream's losses).
	n, err := l.pruneWhere(ctx, cut.Before, publishedTo(cut.Stream))
	out.Events = n
	if err != nil {
		return out, err
	}
	n, err = l.pruneWhere(ctx, cut.StreamBefore, entevent.Not(publishedTo(cut.Stream)))
	out.Events += n
	out.Unpublished = n
	return out, err
}

// pruneWhere deletes the events stored before olderThan for which also
// holds (nil: nothing more), save those Prune keeps.
func (l *Log) pruneWhere(ctx context.Context, olderThan time.Time, also predicate.Event) (int, error) {
	prunable := []predicate.Event{
		entevent.TimestampLT(olderThan.UTC()),
		entevent.Not(entevent.HasDeliveriesWith(entdelivery.StatusEQ(entdelivery.StatusPENDING))),
	}
	if also != nil {
		prunable = append(prunable, also)
	}
	total := 0
	for {
		// Appends only add later events, so an event found not latest here
		// stays not latest until the delete below.
		ids, err := l.db.Event.Query().Where(append(prunable, notLatest)...).Limit(pruneChunk).IDs(ctx)
		if err != nil {
			return total, fmt.Errorf("prune events before %s: %w", olderThan.UTC().Format(TimestampLayout), err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		// The predicates again: a delivery redelivered since the query is
		// pending again, and a stream cursor moved on since has taken
		// what was not taken.
		n, err := l.db.Event.Delete().Where(append(prunable, entevent.IDIn(ids...))...).Exec(ctx)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune events before %s: %w", olderThan.UTC().Format(TimestampLayout), err)
		}
		if n == 0 {
			return total, nil
		}
	}
}

// notLatest keeps the events below their session's highest seq.
func notLatest(s *sql.Selector) {
	latest := sql.Table(entevent.Table).As("latest")
	top := sql.Dialect(s.Dialect()).Select(sql.Max(latest.C(entevent.FieldSeq))).From(latest).
		Where(sql.ColumnsEQ(latest.C(entevent.FieldSessionID), s.C(entevent.FieldSessionID)))
	s.Where(sql.P(func(b *sql.Builder) {
		b.Ident(s.C(entevent.FieldSeq)).WriteString(" < ").Nested(func(b *sql.Builder) { b.Join(top) })
	}))
}

// publishedTo keeps the events a stream took: at or below their session's
// cursor of that stream.
func publishedTo(stream string) predicate.Event {
	return func(s *sql.Selector) {
		c := sql.Table(streamcursor.Table).As("stream_cursor")
		taken := sql.Dialect(s.Dialect()).Select(c.C(streamcursor.FieldSeq)).From(c).Where(sql.And(
			sql.ColumnsEQ(c.C(streamcursor.FieldSessionID), s.C(entevent.FieldSessionID)),
			sql.EQ(c.C(streamcursor.FieldStream), stream),
			sql.ColumnsGTE(c.C(streamcursor.FieldSeq), s.C(entevent.FieldSeq)),
		))
		s.Where(sql.Exists(taken))
	}
}

// PruneInterval is how often RunPrune prunes.
const PruneInterval = time.Hour

// Retention is what RunPrune keeps.
type Retention struct {
	Keep time.Duration // --event-retention
	// Stream, when not "", is the NATS JetStream stream the log is
	// published to (internal/natsstream): the events it has not taken are
	// kept for Hold longer (0: StreamHold).
	Stream string
	Hold   time.Duration
}

// cut is the Cut of a prune at now.
func (r Retention) cut(now time.Time) Cut {
	hold := r.Hold
	if hold <= 0 {
		hold = StreamHold
	}
	return Cut{Before: now.Add(-r.Keep), Stream: r.Stream, StreamBefore: now.Add(-r.Keep - hold)}
}

// RunPrune prunes what r no longer keeps every interval (PruneInterval when
// 0), until ctx ends. A failed prune is logged and tried again at the next
// tick: retention is housekeeping, never a reason to stop. The first prune
// waits one interval: a start is busy enough (sessions reconnecting, the
// offline queue replaying), and the log's clock is read only by what
// stores events until then.
func (l *Log) RunPrune(ctx context.Context, r Retention, interval time.Duration) {
	if interval <= 0 {
		interval = PruneInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		start := time.Now()
		cut := r.cut(l.now())
		n, err := l.Prune(ctx, cut)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			l.log.Error("event log: prune failed", "retention", r.Keep, "pruned", n.Events, "err", err)
		case n.Events > 0:
			l.log.Info("event log: pruned", "events", n.Events, "retention", r.Keep, "took", time.Since(start).Round(time.Millisecond))
		}
		if n.Unpublished > 0 {
			// The stream's consumers see a gap in Wagraph-Seq here.
			l.log.Warn("event log: pruned events the NATS stream had not taken (kept past the retention as long as the stream's hold allows)",
				"stream", r.Stream, "events", n.Unpublished, "retention", r.Keep, "hold", cut.Before.Sub(cut.StreamBefore))
		}
	}
}
