package events

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entevent "github.com/wagraph/wagraph/ent/event"
)

// TestPruneHoldsWhatTheStreamHasNotTaken: with a NATS stream configured,
// an event past its session's cursor of that stream outlives the
// retention (the stream is published from the log: pruned, it would never
// reach the stream), until the stream's hold ends; then it goes anyway,
// counted as unpublished. A cursor of another stream holds nothing back.
func TestPruneHoldsWhatTheStreamHasNotTaken(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fixedClock{t: t0}
	l := newLog(t, db, LogOptions{Now: clock.now})
	for _, s := range []string{"s1", "s1", "s1", "s1", "s2", "s2", "s2"} {
		if _, err := l.Append(ctx, s, []New{{Kind: Call}}); err != nil {
			t.Fatal(err)
		}
	}
	clock.set(t0.Add(48 * time.Hour))
	for _, s := range []string{"s1", "s2"} { // each session's latest: kept whatever
		if _, err := l.Append(ctx, s, []New{{Kind: Call}}); err != nil {
			t.Fatal(err)
		}
	}
	cursor := func(session, stream string, seq int64) {
		t.Helper()
		if err := db.StreamCursor.Create().SetSessionID(session).SetStream(stream).SetSeq(seq).SetUpdatedAt(clock.now()).
			OnConflictColumns("session_id", "stream").UpdateSeq().Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cursor("s1", "WAGRAPH", 2) // s1: 1-2 taken, 3-4 not; s2: none taken
	cursor("s2", "OLD", 3)     // another stream's cursor
	left := func() string {
		rows := db.Event.Query().Order(ent.Asc(entevent.FieldSessionID), ent.Asc(entevent.FieldSeq)).AllX(ctx)
		out := ""
		for _, r := range rows {
			out += fmt.Sprintf("%s/%d ", r.SessionID, r.Seq)
		}
		return out
	}
	retention := Retention{Keep: 24 * time.Hour, Stream: "WAGRAPH"}
	steps := []struct {
		name    string
		at      time.Time
		advance int64 // s1's cursor of WAGRAPH moves to it first (0: stays)
		want    Pruned
		left    string
	}{
		{"past the retention: what the stream took goes", t0.Add(48 * time.Hour), 0,
			Pruned{Events: 2}, "s1/3 s1/4 s1/5 s2/1 s2/2 s2/3 s2/4 "},
		{"the stream catches up: the rest goes", t0.Add(49 * time.Hour), 4,
			Pruned{Events: 2}, "s1/5 s2/1 s2/2 s2/3 s2/4 "},
		{"within the hold: s2's wait", t0.Add(24*time.Hour + StreamHold - time.Minute), 0,
			Pruned{}, "s1/5 s2/1 s2/2 s2/3 s2/4 "},
		{"past the hold: they go, counted as the stream's losses", t0.Add(24*time.Hour + StreamHold + time.Minute), 0,
			Pruned{Events: 3, Unpublished: 3}, "s1/5 s2/4 "},
	}
	for _, st := range steps {
		if st.advance > 0 {
			cursor("s1", "WAGRAPH", st.advance)
		}
		got, err := l.Prune(ctx, retention.cut(st.at))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got != st.want {
			t.Errorf("%s: pruned %+v, want %+v", st.name, got, st.want)
		}
		if got := left(); got != st.left {
			t.Errorf("%s: left %q, want %q", st.name, got, st.left)
		}
	}
}

// TestRetentionCut: the stream's hold counts from the retention's cut,
// StreamHold unless set; no stream, no hold.
func TestRetentionCut(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		r    Retention
		want Cut
	}{
		{Retention{Keep: 24 * time.Hour}, Cut{Before: now.Add(-24 * time.Hour), StreamBefore: now.Add(-24*time.Hour - StreamHold)}},
		{Retention{Keep: time.Hour, Stream: "S"}, Cut{Before: now.Add(-time.Hour), Stream: "S", StreamBefore: now.Add(-time.Hour - StreamHold)}},
		{Retention{Keep: time.Hour, Stream: "S", Hold: 2 * time.Hour}, Cut{Before: now.Add(-time.Hour), Stream: "S", StreamBefore: now.Add(-3 * time.Hour)}},
	} {
		if got := tt.r.cut(now); got != tt.want {
			t.Errorf("%+v: cut %+v, want %+v", tt.r, got, tt.want)
		}
	}
}

// TestDocsStreamHold: the README and docs/events.md give StreamHold as it
// is.
func TestDocsStreamHold(t *testing.T) {
	days := fmt.Sprintf("up to %d days", int(StreamHold/(24*time.Hour)))
	for _, p := range []string{"../../README.md", "../../docs/events.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(strings.Join(strings.Fields(string(b)), " "), days+" more"); n == 0 {
			t.Errorf("%s does not say the NATS stream's hold past the retention is %q (events.StreamHold)", p, days)
		}
	}
}
