package natsstream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/ent/streamcursor"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/natstest"
)

// rig is a database with sessions, the event log over it, and a real
// NATS server with JetStream.
type rig struct {
	db   *ent.Client
	log  *events.Log
	nats *natstest.Server
}

func newRig(t *testing.T, sessions ...string) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("a NATS server as a child process: make test runs it, make test-short skips it")
	}
	db := dbtest.Open(t).Ent
	ctx := context.Background()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range sessions {
		db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	l := events.NewLog(db, events.LogOptions{})
	t.Cleanup(func() { l.Close() })
	return &rig{db: db, log: l, nats: natstest.Start(t)}
}

// appendTexts stores n events of a session, one append each.
func (r *rig) appendTexts(t *testing.T, sessionID string, n int) []events.Envelope {
	t.Helper()
	var out []events.Envelope
	for i := range n {
		envs, err := r.log.Append(context.Background(), sessionID, []events.New{{
			Kind: events.InboundMessageUpsert, Data: json.RawMessage(fmt.Sprintf(`{"text":"t-%d"}`, i)),
		}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, envs...)
	}
	return out
}

// counting is an Observer.
type counting struct {
	published, failed, lag atomic.Int64
}

func (c *counting) StreamPublished()     { c.published.Add(1) }
func (c *counting) StreamPublishFailed() { c.failed.Add(1) }
func (c *counting) StreamLag(n int64)    { c.lag.Store(n) }

func (r *rig) start(t *testing.T, opts Options) *Publisher {
	t.Helper()
	opts.DB, opts.Log = r.db, r.log
	if opts.URL == "" {
		opts.URL = r.nats.URL
	}
	if opts.Scan == 0 {
		opts.Scan = 50 * time.Millisecond
	}
	p, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// waitStream waits (20 s at most) until the stream holds want messages,
// and reads them.
func waitStream(t *testing.T, url, stream string, want int) []natstest.Msg {
	t.Helper()
	var got uint64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err := natstest.Count(url, stream); err == nil {
			if got = n; got >= uint64(want) {
				break
			}
		}
	}
	if got != uint64(want) {
		t.Fatalf("the stream holds %d messages, want %d", got, want)
	}
	return natstest.Messages(t, url, stream)
}

// checkStream holds the stream to the log: each envelope once, in seq
// order per session, with its subject, headers and the body a webhook
// gets (json.Marshal of the stored envelope, as the dispatcher encodes it).
func checkStream(t *testing.T, got []natstest.Msg, want []events.Envelope) {
	t.Helper()
	byID := map[string]events.Envelope{}
	for _, e := range want {
		byID[e.ID] = e
	}
	seen := map[string]bool{}
	last := map[string]int64{}
	for _, m := range got {
		id := m.Header.Get(jetstream.MsgIDHeader)
		e, ok := byID[id]
		if !ok {
			t.Errorf("stream seq %d: Nats-Msg-Id %q is no event expected", m.Seq, id)
			continue
		}
		if seen[id] {
			t.Errorf("event %s (seq %d) is in the stream twice", id, e.Seq)
		}
		seen[id] = true
		if e.Seq <= last[e.SessionID] {
			t.Errorf("session %s: seq %d after %d in the stream, want seq order", e.SessionID, e.Seq, last[e.SessionID])
		}
		last[e.SessionID] = e.Seq
		body, _ := json.Marshal(e)
		if string(m.Data) != string(body) {
			t.Errorf("event %s: body %s, want the webhook's %s", id, m.Data, body)
		}
		if want := Subject(e.SessionID, e.Kind); m.Subject != want {
			t.Errorf("event %s: subject %q, want %q", id, m.Subject, want)
		}
		for h, v := range map[string]string{HeaderSession: e.SessionID, HeaderSeq: strconv.FormatInt(e.Seq, 10), HeaderEvent: string(e.Kind)} {
			if m.Header.Get(h) != v {
				t.Errorf("event %s: header %s %q, want %q", id, h, m.Header.Get(h), v)
			}
		}
	}
	if len(seen) != len(want) {
		var missing []string
		for _, e := range want {
			if !seen[e.ID] {
				missing = append(missing, fmt.Sprintf("%s seq %d", e.SessionID, e.Seq))
			}
		}
		t.Errorf("%d of %d events in the stream; missing e.g. %v", len(seen), len(want), missing[:min(5, len(missing))])
	}
}

// cursorOf is the stored cursor of a session on stream.
func cursorOf(t *testing.T, db *ent.Client, sessionID, stream string) int64 {
	t.Helper()
	c, err := db.StreamCursor.Query().Where(streamcursor.SessionID(sessionID), streamcursor.Stream(stream)).Only(context.Background())
	if ent.IsNotFound(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return c.Seq
}

// TestPublishesTheLog: the events of three sessions, stored before the
// publisher starts and while it runs, are in a stream it creates, once
// each, in seq order per session, with the webhook's body; the cursors
// stand at the last seq; the observer counted them and the lag fell to 0.
func TestPublishesTheLog(t *testing.T) {
	r := newRig(t, "s1", "s2", "s3")
	var want []events.Envelope
	want = append(want, r.appendTexts(t, "s1", 30)...)
	obs := &counting{}
	p := r.start(t, Options{Observer: obs})
	for _, s := range []string{"s2", "s3", "s1"} {
		want = append(want, r.appendTexts(t, s, 40)...)
		p.Wake()
	}
	got := waitStream(t, r.nats.URL, DefaultStream, len(want))
	checkStream(t, got, want)
	for s, n := range map[string]int64{"s1": 70, "s2": 40, "s3": 40} {
		waitFor(t, "cursor of "+s, func() bool { return cursorOf(t, r.db, s, DefaultStream) == n })
	}
	waitFor(t, "lag 0", func() bool { return obs.lag.Load() == 0 })
	if obs.published.Load() != int64(len(want)) || obs.failed.Load() != 0 {
		t.Errorf("observer: %d published, %d failed; want %d, 0", obs.published.Load(), obs.failed.Load(), len(want))
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
	}
}

// TestBrokerAway: the broker down at start is no error (logged); events
// stored meanwhile are counted as lag and published once it is up; the
// broker stopped mid-way and started again loses nothing and repeats
// nothing; a publisher stopped and started again resumes at its cursor
// (nothing published twice).
func TestBrokerAway(t *testing.T) {
	r := newRig(t, "a", "b")
	r.nats.Stop()
	logger, logs := logtest.New(nil)
	obs := &counting{}
	p := r.start(t, Options{Observer: obs, Logger: logger})
	want := append(r.appendTexts(t, "a", 50), r.appendTexts(t, "b", 50)...)
	p.Wake()
	waitFor(t, "lag 100 while the broker is away", func() bool { return obs.lag.Load() == 100 })
	if !strings.Contains(logs.String(), "the broker cannot be reached at start") {
		t.Errorf("no warning of the broker away at start; log:\n%s", logs.String())
	}
	// Publishing starts as soon as the connection is made (nats.go dials
	// again every second), not at the end of the publisher's backoff.
	time.Sleep(6 * time.Second) // the backoff at its longest
	r.nats.Run()
	back := time.Now()
	waitStream(t, r.nats.URL, DefaultStream, 100)
	if took := time.Since(back); took > 3*time.Second {
		t.Errorf("the stream had the events %.1f s after the broker came up, want within 3 s", took.Seconds())
	}

	// Stopped while a session is being published, and started again.
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 5 {
			want = append(want, r.appendTexts(t, "a", 40)...)
			p.Wake()
		}
	})
	waitFor(t, "the second part under way", func() bool { return obs.published.Load() > 120 })
	r.nats.Stop()
	wg.Wait()
	want = append(want, r.appendTexts(t, "b", 30)...)
	time.Sleep(500 * time.Millisecond)
	r.nats.Run()
	checkStream(t, waitStream(t, r.nats.URL, DefaultStream, len(want)), want)

	// A new publisher on the same cursors publishes only what is new.
	p.Close()
	want = append(want, r.appendTexts(t, "b", 10)...)
	p2 := r.start(t, Options{})
	p2.Wake()
	checkStream(t, waitStream(t, r.nats.URL, DefaultStream, len(want)), want)
	t.Logf("%d published, %d failed publishes counted while the broker was away", obs.published.Load(), obs.failed.Load())
}

// TestExistingStreams: a stream whose subjects cover wagraph.> is used as
// it is (its other subjects and settings kept); one whose subjects do not
// is an error at start naming it, and so in Check.
func TestExistingStreams(t *testing.T) {
	r := newRig(t, "s1")
	nc, err := nats.Connect(r.nats.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WIDE", Subjects: []string{"other", "wagraph.>"}, MaxMsgs: 1000}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NARROW", Subjects: []string{"elsewhere.>"}}); err != nil {
		t.Fatal(err)
	}

	_, err = Start(ctx, Options{URL: r.nats.URL, Stream: "NARROW", DB: r.db, Log: r.log})
	if err == nil || !strings.Contains(err.Error(), `"NARROW"`) || !strings.Contains(err.Error(), "wagraph.>") {
		t.Errorf("Start on a stream not covering wagraph.>: %v, want an error naming it and wagraph.>", err)
	}
	if _, err := Check(ctx, r.nats.URL, "", "NARROW", 5*time.Second); err == nil || !strings.Contains(err.Error(), `"NARROW"`) {
		t.Errorf("Check of NARROW: %v, want an error naming it", err)
	}

	want := r.appendTexts(t, "s1", 5)
	p := r.start(t, Options{Stream: "WIDE"})
	if p.Stream() != "WIDE" { // what the event log's retention holds back for
		t.Errorf("Stream() = %q, want WIDE", p.Stream())
	}
	p.Wake()
	checkStream(t, waitStream(t, r.nats.URL, "WIDE", len(want)), want)
	info, err := js.Stream(ctx, "WIDE")
	if err != nil {
		t.Fatal(err)
	}
	if c := info.CachedInfo().Config; !slices.Equal(c.Subjects, []string{"other", "wagraph.>"}) || c.MaxMsgs != 1000 {
		t.Errorf("the existing stream was changed: subjects %v, max msgs %d", c.Subjects, c.MaxMsgs)
	}
	if msg, err := Check(ctx, r.nats.URL, "", "WIDE", 5*time.Second); err != nil || !strings.Contains(msg, `"WIDE"`) {
		t.Errorf("Check of WIDE: %q %v", msg, err)
	}
	if msg, err := Check(ctx, r.nats.URL, "", "NEW", 5*time.Second); err != nil || !strings.Contains(msg, "does not exist yet") {
		t.Errorf("Check of a missing stream: %q %v", msg, err)
	}
}

// TestHeldOnly: a process publishes the sessions it holds, and the others
// once it holds them (a lease taken over in a cluster).
func TestHeldOnly(t *testing.T) {
	r := newRig(t, "mine", "theirs")
	var mu sync.Mutex
	held := []string{"mine"}
	mine := r.appendTexts(t, "mine", 10)
	theirs := r.appendTexts(t, "theirs", 10)
	obs := &counting{}
	r.start(t, Options{Observer: obs, Held: func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(held) }})
	checkStream(t, waitStream(t, r.nats.URL, DefaultStream, 10), mine)
	time.Sleep(200 * time.Millisecond) // a few scans
	if n := cursorOf(t, r.db, "theirs", DefaultStream); n != 0 {
		t.Errorf("the session not held has cursor %d, want none", n)
	}
	if obs.lag.Load() != 0 {
		t.Errorf("lag %d, want 0: only the sessions held count", obs.lag.Load())
	}
	mu.Lock()
	held = append(held, "theirs")
	mu.Unlock()
	checkStream(t, waitStream(t, r.nats.URL, DefaultStream, 20), append(mine, theirs...))
}

// TestCredentials: a broker that requires a user and password is reached
// with them in the URL, which no log line shows; a wrong password is a
// failure Check names, without the password.
func TestCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("a NATS server as a child process: make test runs it, make test-short skips it")
	}
	srv := natstest.Start(t, "--user", "wagraph", "--pass", "s3cret-pw")
	authed := strings.Replace(srv.URL, "nats://", "nats://wagraph:s3cret-pw@", 1)
	if _, err := Check(context.Background(), authed, "", "", 5*time.Second); err != nil {
		t.Errorf("Check with the right password: %v", err)
	}
	wrong := strings.Replace(srv.URL, "nats://", "nats://wagraph:wrong-pw@", 1)
	_, err := Check(context.Background(), wrong, "", "", 5*time.Second)
	if err == nil || strings.Contains(err.Error(), "wrong-pw") || !strings.Contains(err.Error(), "uthorization") {
		t.Errorf("Check with a wrong password: %v, want an authorization error without the password", err)
	}

	db := dbtest.Open(t).Ent
	l := events.NewLog(db, events.LogOptions{})
	t.Cleanup(func() { l.Close() })
	logger, logs := logtest.New(nil)
	p, err := Start(context.Background(), Options{URL: wrong, DB: db, Log: l, Logger: logger, Scan: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	p.Close()
	if out := logs.String(); strings.Contains(out, "wrong-pw") || !strings.Contains(out, "xxxxx") {
		t.Errorf("the log shows the password, or no redacted URL:\n%s", out)
	}
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"wagraph.>", true}, {">", true}, {"*.>", true},
		{"wagraph.*", false}, {"wagraph.events.>", false}, {"wagraph", false},
		{"other.>", false}, {"*", false}, {"*.*.>", false}, {"wagraph.*.>", false},
	} {
		if got := covers(tc.filter, Subjects); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.filter, Subjects, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                      "nats://127.0.0.1:4222",
		"nats://u:pw@h1:4222,nats://u:pw@h2:4222":    "nats://u:xxxxx@h1:4222,nats://u:xxxxx@h2:4222",
		"nats://sometoken@h:4222":                    "nats://xxxxx@h:4222",
		"tls://user:p%40ss@broker.example:4222":      "tls://user:xxxxx@broker.example:4222",
		"nats://h1:4222, nats://user:secret@h2:4222": "nats://h1:4222,nats://user:xxxxx@h2:4222",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOff: without a URL there is no publisher, and the nil one the
// composition root wires takes Wake and Close.
func TestOff(t *testing.T) {
	p, err := Start(context.Background(), Options{})
	if p != nil || err != nil {
		t.Fatalf("Start without a URL = %v, %v; want nil, nil", p, err)
	}
	if s := p.Stream(); s != "" {
		t.Errorf("the nil publisher's Stream() = %q, want none (retention holds nothing back)", s)
	}
	p.Wake()
	p.Close()
}
