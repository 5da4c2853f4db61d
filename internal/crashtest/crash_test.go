//go:build unix

package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
)

const (
	adminToken = "wgu_crashTestAdminToken0123456789abcdefgh"
	me         = "4915550077001" // the session's account
	contact    = "4915550077002" // who sends the burst
	prefix     = "lead-"
	burst      = 2000
	// killAt is how far the burst has come (texts stored or delivered)
	// when the server is killed: well into it, far from its end.
	killAt = burst / 5
)

// TestCrashMidBurst is issue 10's crash test (must show 2): the server and
// the network as separate processes; the network sends 2,000 texts to a
// session; SIGKILL the server in the middle; start it again on the same
// data directory. Then the session has stored every text, the webhook
// receiver got every text at least once (a duplicate with the same
// webhook-id: the event's id), and the event log has every seq from 1
// without a gap.
func TestCrashMidBurst(t *testing.T) {
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	dataDir := loc.DataDir
	control := cs.startNetwork()

	rv := newReceiver(prefix)
	hook := httptest.NewServer(rv)
	t.Cleanup(hook.Close)

	serve := func(name string) *server {
		s := startServer(t, cs.start(name, serveArgs(dataDir, control, loc.URL)...))
		s.ready(t)
		return s
	}

	first := serve("server-1")
	sessionID := linkSession(t, first, "crash", hook.URL+"/hook")

	// The test reads the server's message store (read-only) to see how
	// far the session has come: the part of the pipeline that exists
	// before the event log.
	db := openStore(t, loc)
	stored := func() (map[string]int, error) { return storedTexts(db, sessionID) }

	// The burst runs while the server takes it in; the server is killed
	// in the middle, possibly before the mutation has answered: the
	// network goes on queueing what is left for the then offline device.
	answered := startBurst(first, sessionID)
	atKill := midBurst(t, first, answered, rv, stored, killAt)
	first.kill(t)
	afterKill, err := stored()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGKILL with %d texts stored (%d when decided), %d delivered", len(afterKill), len(atKill), rv.seen())
	if len(afterKill) >= burst {
		t.Fatalf("the server had stored all %d texts before it was killed: no crash in the middle (a burst too small for this machine?)", burst)
	}
	select {
	case a := <-answered:
		if a.err == nil && a.queued != burst {
			t.Fatalf("sandboxSendBurst queued %d, want %d", a.queued, burst)
		}
		// An error: the kill cut the answer off.
	case <-time.After(10 * time.Second):
		t.Fatal("sandboxSendBurst did not end within 10 s of the kill")
	}

	second := serve("server-2")
	second.status(t, sessionID, "CONNECTED", time.Minute)

	// What exists already: the offline-queue replay after the restart
	// brings every text the server had not acknowledged, and the store
	// keeps each once.
	var counts map[string]int
	second.waitFor(t, fmt.Sprintf("all %d texts stored", burst), time.Minute, func() (bool, error) {
		var err error
		counts, err = stored()
		return len(counts) == burst, fmt.Errorf("%d stored: %v", len(counts), err)
	})
	for i := 1; i <= burst; i++ {
		if n := counts[fmt.Sprintf("%s%d", prefix, i)]; n != 1 {
			t.Errorf("%s%d stored %d times, want once", prefix, i, n)
		}
	}

	// The event pipeline (sink → log → dispatcher → webhook, and the
	// events query). A log that cannot be read is a failure, and the
	// deliveries are still checked.
	events, err := eventLog(t, second, sessionID)
	if err != nil {
		t.Errorf("event log: %v", err)
	} else {
		checkLog(t, events, sessionID)
	}
	checkDeliveries(t, second, rv, events)
}

// serveArgs are the arguments of `wagraph serve` on dataDir (and the
// PostgreSQL database at url, when not empty) against the network whose
// control address is control: fast webhook retries, room for the burst in
// the rate limit and the complexity bound, logs in JSON for listenAddr.
func serveArgs(dataDir, control, url string) []string {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--sandbox-network", control, "--admin-token", adminToken, "--allow-private-urls",
		"--webhook-retry", "0s,50ms,100ms,200ms,400ms,800ms,1s,1s,1s,1s,2s,2s,2s,2s",
		"--rate", "1000/s,1000", "--graphql-complexity", "10000", "--log-format", "json"}
	if url != "" {
		args = append(args, "--database-url", url)
	}
	return args
}

// startServer is the client side of a started `wagraph serve` child: it
// waits for the address it listens on.
func startServer(t *testing.T, c *child) *server {
	t.Helper()
	return &server{child: c, base: "http://" + c.listenAddr(t), token: adminToken, http: &http.Client{Timeout: time.Minute}}
}

// linkSession creates a session named name, links it as the account me
// and gives it a webhook at hookURL for the inbound messages; it returns
// the session's id.
func linkSession(t *testing.T, s *server, name, hookURL string) string {
	t.Helper()
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.must(t, `mutation($n: String!) { createSession(name: $n) { session { id } } }`, map[string]any{"n": name}, &created)
	sessionID := created.CreateSession.Session.ID
	s.must(t, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": sessionID}, nil)
	s.status(t, sessionID, "PAIRING", time.Minute)
	var linked struct{ SandboxLinkDevice struct{ Status string } }
	s.must(t, `mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { status } }`,
		map[string]any{"id": sessionID, "p": me}, &linked)
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		t.Fatalf("linked session is %s", linked.SandboxLinkDevice.Status)
	}
	s.must(t, `mutation($id: ID!, $url: String!) {
		createWebhook(sessionId: $id, input: {url: $url, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } secret } }`,
		map[string]any{"id": sessionID, "url": hookURL}, nil)
	return sessionID
}

// storedTexts counts the session's stored messages by text, for the texts
// of the burst.
func storedTexts(db *ent.Client, sessionID string) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	texts, err := db.Message.Query().Where(message.SessionID(sessionID), message.TextHasPrefix(prefix)).
		Select(message.FieldText).Strings(ctx)
	counts := map[string]int{}
	for _, s := range texts {
		counts[s]++
	}
	return counts, err
}

// answer is how sandboxSendBurst answered.
type answer struct {
	queued int
	err    error
}

// startBurst has the network send the burst (burst texts from contact,
// prefix+"1" on) to the session through s; the answer comes on the
// channel (buffered: nobody has to read it).
func startBurst(s *server, sessionID string) chan answer {
	answered := make(chan answer, 1)
	go func() {
		var out struct{ SandboxSendBurst int }
		err := s.graphql(`mutation($id: ID!, $f: String!, $n: Int!, $p: String!) { sandboxSendBurst(sessionId: $id, from: $f, count: $n, prefix: $p) }`,
			map[string]any{"id": sessionID, "f": contact, "n": burst, "p": prefix}, &out)
		answered <- answer{out.SandboxSendBurst, err}
	}()
	return answered
}

// midBurst waits (a minute at most) until at texts of the burst are
// stored or delivered, and returns the stored ones. A burst that failed
// is a failure; its answer is put back for the caller to check.
func midBurst(t *testing.T, s *server, answered chan answer, rv *receiver, stored func() (map[string]int, error), at int) map[string]int {
	t.Helper()
	var counts map[string]int
	s.waitFor(t, fmt.Sprintf("%d texts stored or delivered", at), time.Minute, func() (bool, error) {
		select {
		case a := <-answered:
			answered <- a // for the caller's check
			if a.err != nil {
				return false, fmt.Errorf("sandboxSendBurst: %w", a.err)
			}
		default:
		}
		c, err := stored()
		counts = c
		return len(c) >= at || rv.seen() >= at, err
	})
	return counts
}

// loggedEvent is a node of the events query.
type loggedEvent struct {
	ID         string
	Seq        int64
	Kind       string
	SessionID  string
	OccurredAt string
	Data       json.RawMessage
}

// eventLog pages through the session's stored events (GraphQL events,
// graphql.md) until every text of the burst is in it (30 s at most). A
// GraphQL error ends the wait at once: waiting does not cure it.
func eventLog(t *testing.T, s *server, sessionID string) ([]loggedEvent, error) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		events, err := readLog(s, sessionID)
		if err != nil {
			return nil, err
		}
		texts := map[string]bool{}
		for _, e := range events {
			if m, ok := inbound(e); ok {
				texts[m.Text] = true
			}
		}
		if len(texts) == burst {
			return events, nil
		}
		last = fmt.Errorf("%d events, %d of the %d texts", len(events), len(texts), burst)
	}
	return nil, fmt.Errorf("not every text in the log within 30 s: %v", last)
}

// readLog reads the whole log, 100 events a page.
func readLog(s *server, sessionID string) ([]loggedEvent, error) {
	var all []loggedEvent
	var after any
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, fmt.Errorf("more than 1000 pages of events: the cursor does not move")
		}
		var out struct {
			Events struct {
				Edges []struct {
					Cursor string
					Node   loggedEvent
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		err := s.graphql(`query($s: ID!, $after: String) { events(sessionId: $s, first: 100, after: $after) {
			edges { cursor node { id seq kind sessionId occurredAt data } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"s": sessionID, "after": after}, &out)
		if err != nil {
			return nil, err
		}
		for _, e := range out.Events.Edges {
			all = append(all, e.Node)
		}
		if !out.Events.PageInfo.HasNextPage || out.Events.PageInfo.EndCursor == nil {
			return all, nil
		}
		after = *out.Events.PageInfo.EndCursor
	}
}

// inbound reads an inbound-message.upsert of the burst.
func inbound(e loggedEvent) (messageData, bool) {
	var m messageData
	if e.Kind != "INBOUND_MESSAGE_UPSERT" || json.Unmarshal(e.Data, &m) != nil || len(m.Text) <= len(prefix) || m.Text[:len(prefix)] != prefix {
		return m, false
	}
	return m, true
}

// checkLog: every seq from 1 without a gap, in order, one session, unique
// ids, and each text of the burst exactly once (a message WhatsApp sent
// again after the crash is the event stored before, not a new one).
func checkLog(t *testing.T, log []loggedEvent, sessionID string) {
	t.Helper()
	ids := map[string]bool{}
	texts := map[string][]int64{}
	for i, e := range log {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d of the log has seq %d, want %d: every seq from 1, without a gap, in order", i+1, e.Seq, i+1)
		}
		if e.SessionID != sessionID || e.ID == "" || ids[e.ID] {
			t.Fatalf("event seq %d: id %q (seen before: %v), session %q; want a new id of session %s", e.Seq, e.ID, ids[e.ID], e.SessionID, sessionID)
		}
		ids[e.ID] = true
		if m, ok := inbound(e); ok {
			texts[m.Text] = append(texts[m.Text], e.Seq)
		}
	}
	for i := 1; i <= burst; i++ {
		text := fmt.Sprintf("%s%d", prefix, i)
		if seqs := texts[text]; len(seqs) != 1 {
			t.Errorf("%s is in the log %d times (seq %v), want once", text, len(seqs), seqs)
		}
	}
}

// checkDeliveries waits (1 min at most) until the receiver got every text,
// then checks each delivery against the log (when it could be read): the
// body is the stored envelope, the webhook-id its id; so every duplicate of
// a message carries the same webhook-id.
func checkDeliveries(t *testing.T, s *server, rv *receiver, log []loggedEvent) {
	t.Helper()
	byID := map[string]loggedEvent{}
	for _, e := range log {
		byID[e.ID] = e
	}
	deadline := time.Now().Add(time.Minute)
	for rv.seen() < burst && time.Now().Before(deadline) {
		if done, how := s.exited(); done {
			t.Fatalf("%s ended (%v) while the deliveries were awaited", s.name, how)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, bad := rv.deliveries()
	if len(bad) > 0 {
		t.Errorf("%d requests to the webhook were not an envelope, first: %s", len(bad), bad[0])
	}
	hooksOf := map[string]map[string]bool{} // message id → webhook-ids
	msgsOf := map[string]map[string]bool{}  // text → message ids
	for _, d := range got {
		if d.webhookID != d.env.ID {
			t.Errorf("delivery of event %s (seq %d) has webhook-id %q, want the event id", d.env.ID, d.env.Seq, d.webhookID)
		}
		if e, ok := byID[d.env.ID]; len(log) > 0 && (!ok || e.Seq != d.env.Seq || d.env.Event != "inbound-message.upsert") {
			t.Errorf("delivered event %s seq %d %s is not in the log as such (log: %+v)", d.env.ID, d.env.Seq, d.env.Event, e)
		}
		if d.msg.ID == "" {
			t.Errorf("delivered event %s carries no message id", d.env.ID)
			continue
		}
		if hooksOf[d.msg.ID] == nil {
			hooksOf[d.msg.ID] = map[string]bool{}
		}
		hooksOf[d.msg.ID][d.webhookID] = true
		if msgsOf[d.msg.Text] == nil {
			msgsOf[d.msg.Text] = map[string]bool{}
		}
		msgsOf[d.msg.Text][d.msg.ID] = true
	}
	var missing []string
	for i := 1; i <= burst; i++ {
		text := fmt.Sprintf("%s%d", prefix, i)
		switch ids := msgsOf[text]; {
		case len(ids) == 0:
			missing = append(missing, text)
		case len(ids) > 1:
			t.Errorf("%s was delivered as %d different messages %v, want one", text, len(ids), keys(ids))
		}
	}
	if len(missing) > 0 {
		t.Errorf("the webhook receiver got %d of the %d texts within a minute of the restart (%d deliveries); missing e.g. %v",
			burst-len(missing), burst, len(got), missing[:min(5, len(missing))])
	}
	dups := 0
	for id, hooks := range hooksOf {
		if len(hooks) != 1 {
			t.Errorf("message %s was delivered with %d different webhook-ids %v: duplicates must share webhook-id", id, len(hooks), keys(hooks))
		}
	}
	for _, d := range got {
		if d.msg.ID != "" {
			dups++
		}
	}
	t.Logf("%d deliveries of %d messages (%d duplicates)", dups, len(hooksOf), dups-len(hooksOf))
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// openStore opens the server's product database beside it: SQLite's file
// read-only, or its PostgreSQL database.
func openStore(t *testing.T, loc dbtest.Location) *ent.Client {
	t.Helper()
	dia, driver, dsn := dialect.SQLite, "sqlite3", "file:"+filepath.Join(loc.DataDir, "wagraph.db")+"?mode=ro&_busy_timeout=10000"
	if loc.URL != "" {
		dia, driver, dsn = dialect.Postgres, storage.PostgresDriver, loc.URL
	}
	sqlDB, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := ent.NewClient(ent.Driver(entsql.OpenDB(dia, sqlDB)))
	t.Cleanup(func() { db.Close() })
	return db
}
