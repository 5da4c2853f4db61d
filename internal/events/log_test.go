package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// openDB opens a fresh database of the run's backend as the app does
// (internal/dbtest, internal/storage), with a user owning the sessions.
func openDB(t testing.TB, sessions ...string) *ent.Client {
	db, _ := openStorage(t, sessions...)
	return db
}

// openStorage is openDB also returning the opened storage.
func openStorage(t testing.TB, sessions ...string) (*ent.Client, *storage.DB) {
	t.Helper()
	d := dbtest.Open(t)
	db := d.Ent
	ctx := context.Background()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range sessions {
		db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	return db, d
}

// fixedClock is a settable clock, safe across goroutines.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func newLog(t testing.TB, db *ent.Client, opts LogOptions) *Log {
	t.Helper()
	l := NewLog(db, opts)
	t.Cleanup(func() { l.Close() })
	return l
}

func data(s string) json.RawMessage { return json.RawMessage(s) }

// TestAppendSeqConcurrent: 8 goroutines × 200 appends over 3 sessions give
// each session seq 1..n without gap or repeat, each caller's own appends in
// increasing seq, every event stored as returned; and the batcher batches.
func TestAppendSeqConcurrent(t *testing.T) {
	sessions := []string{"s1", "s2", "s3"}
	db := openDB(t, sessions...)
	l := newLog(t, db, LogOptions{})
	const workers, perWorker = 8, 200
	type got struct {
		env    Envelope
		worker int
	}
	var mu sync.Mutex
	var all []got
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			last := map[string]int64{}
			for i := range perWorker {
				s := sessions[(w+i)%len(sessions)]
				envs, err := l.Append(context.Background(), s, []New{{Kind: MessagesUpdate, Data: data(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))}})
				if err != nil {
					errs <- err
					return
				}
				if len(envs) != 1 || envs[0].SessionID != s || envs[0].Seq <= last[s] {
					errs <- fmt.Errorf("worker %d append %d: envelopes %+v after seq %d", w, i, envs, last[s])
					return
				}
				last[s] = envs[0].Seq
				mu.Lock()
				all = append(all, got{envs[0], w})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(all) != workers*perWorker {
		t.Fatalf("%d envelopes, want %d", len(all), workers*perWorker)
	}
	seqs := map[string][]int64{}
	ids := map[string]bool{}
	for _, g := range all {
		seqs[g.env.SessionID] = append(seqs[g.env.SessionID], g.env.Seq)
		if ids[g.env.ID] {
			t.Errorf("id %s given twice", g.env.ID)
		}
		ids[g.env.ID] = true
	}
	for _, s := range sessions {
		slices.Sort(seqs[s])
		for i, seq := range seqs[s] {
			if seq != int64(i+1) {
				t.Fatalf("session %s: seq %d at position %d: a gap or a repeat", s, seq, i)
			}
		}
		stored, err := l.After(context.Background(), s, 0, nil, MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(seqs[s]) {
			t.Errorf("session %s: %d stored, %d returned", s, len(stored), len(seqs[s]))
		}
	}
	st := l.Stats()
	if st.Events != workers*perWorker {
		t.Errorf("stats count %d events, want %d", st.Events, workers*perWorker)
	}
	if st.Batches >= workers*perWorker {
		t.Errorf("%d transactions for %d appends: the batcher did not batch", st.Batches, workers*perWorker)
	}
	t.Logf("%d appends in %d transactions", workers*perWorker, st.Batches)
}

// TestAppendDeliveries: a delivery row per event and enabled webhook of the
// event's session that selected the kind; none for disabled webhooks, other
// kinds, other sessions' webhooks, or webhook.test.
func TestAppendDeliveries(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	hook := func(id, session string, enabled bool, kinds ...Kind) {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		db.Webhook.Create().SetID(id).SetSessionID(session).SetURL("https://example.com/" + id).
			SetEnabled(enabled).SetEvents(names).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
	}
	hook("w-msg", "s1", true, MessagesUpdate, InboundMessageUpsert)
	hook("w-conn", "s1", true, ConnectionUpdate)
	hook("w-off", "s1", false, MessagesUpdate, ConnectionUpdate)
	hook("w-other", "s2", true, MessagesUpdate, ConnectionUpdate)
	now := time.Date(2026, 11, 22, 10, 4, 5, 123_456_789, time.UTC)
	l := newLog(t, db, LogOptions{Now: func() time.Time { return now }})

	envs, err := l.Append(ctx, "s1", []New{
		{Kind: MessagesUpdate, Data: data(`{}`)},
		{Kind: ConnectionUpdate, Data: data(`{"status":"CONNECTED"}`)},
		{Kind: PresenceUpdate, Data: data(`{}`)},
		{Kind: WebhookTest, Data: data(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env  Envelope
		want []string // webhook ids owed the event
	}{
		{envs[0], []string{"w-msg"}},
		{envs[1], []string{"w-conn"}},
		{envs[2], nil},
		{envs[3], nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.env.Kind), func(t *testing.T) {
			rows := db.Delivery.Query().Where(entdelivery.EventID(tt.env.ID)).Order(ent.Asc(entdelivery.FieldWebhookID)).AllX(ctx)
			var hooks []string
			for _, r := range rows {
				hooks = append(hooks, r.WebhookID)
				if r.Status != entdelivery.StatusPENDING || r.Attempts != 0 || !r.NextAttemptAt.Equal(now.Truncate(time.Millisecond)) {
					t.Errorf("delivery %s: status %s, attempts %d, next %v; want PENDING, 0, due now", r.ID, r.Status, r.Attempts, r.NextAttemptAt)
				}
			}
			if !slices.Equal(hooks, tt.want) {
				t.Errorf("deliveries to %v, want %v", hooks, tt.want)
			}
		})
	}
	if n := db.Delivery.Query().CountX(ctx); n != 2 {
		t.Errorf("%d deliveries in all, want 2", n)
	}
}

// TestEnvelopeJSON: the envelope on the wire is exactly events.md's, field
// names, order and timestamp format included, from Append and from the log.
func TestEnvelopeJSON(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1")
	now := time.Date(2026, 11, 22, 11, 4, 5, 123_999_000, time.FixedZone("CET", 3600))
	l := newLog(t, db, LogOptions{Now: func() time.Time { return now }, Random: bytes.NewReader(bytes.Repeat([]byte{0xAB}, 10))})
	envs, err := l.Append(ctx, "s1", []New{{Kind: InboundMessageUpsert, Data: data(`{"id":"M1","text":"hi"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := l.After(ctx, "s1", 0, nil, 10)
	if err != nil || len(stored) != 1 {
		t.Fatalf("After: %v, %d envelopes", err, len(stored))
	}
	const want = `{"id":"evt_01M81BD0M3NENTQAXBNENTQAXB","seq":1,"event":"inbound-message.upsert","sessionId":"s1",` +
		`"timestamp":"2026-11-22T10:04:05.123Z","data":{"id":"M1","text":"hi"}}`
	for name, env := range map[string]Envelope{"appended": envs[0], "stored": stored[0]} {
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("%s envelope\n got %s\nwant %s", name, b, want)
		}
		var back Envelope
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.ID != env.ID || back.Seq != env.Seq || !back.Timestamp.Equal(env.Timestamp) || string(back.Data) != string(env.Data) {
			t.Errorf("%s envelope does not survive a round trip: %+v", name, back)
		}
	}
	if b, _ := json.Marshal(Envelope{Kind: Call}); !bytes.Contains(b, []byte(`"data":{}`)) {
		t.Errorf("empty data written as %s, want {}", b)
	}
}

// TestNewULID: ids sort by time and differ within a millisecond.
func TestNewULID(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	a, _ := newULID(t0, bytes.NewReader(bytes.Repeat([]byte{0xFF}, 10)))
	b, _ := newULID(t0.Add(time.Millisecond), bytes.NewReader(make([]byte, 10)))
	c, _ := newULID(t0.Add(time.Millisecond), bytes.NewReader(bytes.Repeat([]byte{1}, 10)))
	if len(a) != 26 || !(a < b && b < c) {
		t.Errorf("ids %s %s %s do not sort by time then randomness", a, b, c)
	}
	if _, err := newULID(t0, bytes.NewReader(nil)); err == nil {
		t.Error("no error when randomness runs out")
	}
}

// TestAppendSeqSeveralLogs: three Logs on their own pools of one database
// (as processes of a cluster are) append to the same sessions at once.
// Each session's seqs are 1..n without gap or repeat, and in commit order:
// a reader following the log with After from its last seq, while they
// write, sees every event once. On SQLite the write lock orders the
// writers; on PostgreSQL the session row lock (Log.lockSessions) does.
func TestAppendSeqSeveralLogs(t *testing.T) {
	const logs, workers, perWorker = 3, 3, 60
	sessions := []string{"s1", "s2"}
	loc := dbtest.NewLocation(t)
	first := loc.Open(t).Ent
	ctx := context.Background()
	first.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range sessions {
		first.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	var writers sync.WaitGroup
	for n := range logs {
		db := first
		if n > 0 {
			db = loc.Open(t).Ent
		}
		l := newLog(t, db, LogOptions{})
		for w := range workers {
			writers.Go(func() {
				for i := range perWorker {
					s := sessions[(n+w+i)%len(sessions)]
					if _, err := l.Append(ctx, s, []New{{Kind: MessagesUpdate, Data: data(fmt.Sprintf(`{"l":%d,"w":%d,"i":%d}`, n, w, i))}}); err != nil {
						t.Errorf("log %d worker %d append %d: %v", n, w, i, err)
						return
					}
				}
			})
		}
	}
	writing := make(chan struct{})
	go func() { writers.Wait(); close(writing) }()

	reader := newLog(t, first, LogOptions{})
	var seen []int64
	follow := func() {
		for {
			after := int64(0)
			if len(seen) > 0 {
				after = seen[len(seen)-1]
			}
			page, err := reader.After(ctx, "s1", after, nil, MaxPage)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				return
			}
			for _, e := range page {
				seen = append(seen, e.Seq)
			}
		}
	}
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		default:
		}
		follow()
	}
	follow()
	want := logs * workers * perWorker / len(sessions)
	if len(seen) != want {
		t.Errorf("the reader followed %d events of s1, want %d", len(seen), want)
	}
	for i, seq := range seen {
		if seq != int64(i+1) {
			t.Fatalf("the reader saw seq %d at position %d (%v…): a gap, a repeat or a seq committed out of order", seq, i, seen[max(0, i-3):i+1])
		}
	}
	for _, s := range sessions {
		stored, err := reader.After(ctx, s, 0, nil, MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range stored {
			if e.Seq != int64(i+1) {
				t.Fatalf("session %s: stored seq %d at position %d", s, e.Seq, i)
			}
		}
	}
}
