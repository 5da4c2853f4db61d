//go:build unix

package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// The cluster test (issue 12, must show 2): a network process and three
// server processes on one PostgreSQL database.
const (
	clusterSessions = 30
	clusterServers  = 3
	failoverGoal    = 30 * time.Second // operations.md: all CONNECTED again within 30 s of the kill
	foPrefix        = "fo-"            // the texts sent during the failover
	foContact       = "4915559900001"  // who sends them
)

// clusterPhone is the account of session i.
func clusterPhone(i int) string { return fmt.Sprintf("49155588%05d", i+1) }

// TestClusterFailover: 30 sessions linked through three processes sharing
// one database, spread 10/10/10; a send through any process arrives once;
// the process holding most sessions is SIGKILLed while contacts keep
// writing to every session: every session is CONNECTED again on the others
// within 30 s of the kill (the figure is printed), the network never saw a
// device connected twice at once, and a webhook receiver and a subscriber
// on a surviving process got every text sent meanwhile.
func TestClusterFailover(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("a cluster shares one PostgreSQL database: the PostgreSQL pass of make test runs this test")
	}
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	control := cs.startNetwork()

	rv := newReceiver(foPrefix)
	hook := httptest.NewServer(rv)
	t.Cleanup(hook.Close)

	servers := make([]*server, clusterServers)
	for i := range servers {
		name := fmt.Sprintf("node-%d", i+1)
		c := cs.start(name, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database-url", loc.URL,
			"--node-id", name, "--sandbox-network", control, "--admin-token", adminToken, "--allow-private-urls",
			"--webhook-retry", "0s,50ms,100ms,200ms,400ms,800ms,1s,1s,1s,1s,2s,2s,2s,2s",
			"--rate", "1000/s,1000", "--graphql-complexity", "10000", "--log-format", "json")
		servers[i] = &server{child: c, base: "http://" + c.listenAddr(t), token: adminToken, http: &http.Client{Timeout: time.Minute}}
	}
	for _, s := range servers {
		s.ready(t)
	}

	// Linking: created through one process, connected through the next,
	// scanned through the third: each step may be forwarded to the holder.
	ids := make([]string, clusterSessions)
	for i := range ids {
		var created struct {
			CreateSession struct{ Session struct{ ID string } }
		}
		servers[i%3].must(t, `mutation($n: String!) { createSession(name: $n) { session { id } } }`, map[string]any{"n": fmt.Sprintf("c%d", i)}, &created)
		ids[i] = created.CreateSession.Session.ID
		servers[(i+1)%3].must(t, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": ids[i]}, nil)
		servers[(i+2)%3].status(t, ids[i], "PAIRING", time.Minute)
		var linked struct{ SandboxLinkDevice struct{ Status string } }
		servers[(i+2)%3].must(t, `mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { status } }`,
			map[string]any{"id": ids[i], "p": clusterPhone(i)}, &linked)
		if linked.SandboxLinkDevice.Status != "CONNECTED" {
			t.Fatalf("session %d linked through %s is %s", i, servers[(i+2)%3].name, linked.SandboxLinkDevice.Status)
		}
	}
	owners := waitSpread(t, servers[0], ids, nil, time.Minute)
	t.Logf("30 sessions linked and spread: %v", countOwners(owners))

	for i, id := range ids {
		servers[(i+1)%3].must(t, `mutation($id: ID!, $url: String!) {
			createWebhook(sessionId: $id, input: {url: $url, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } } }`,
			map[string]any{"id": id, "url": hook.URL + "/hook"}, nil)
	}

	// A send through any process arrives once: session i writes to the
	// account of session i+1 through process i%3.
	for i, id := range ids {
		servers[i%3].must(t, `mutation($id: ID!, $to: String!, $text: String!) { sendText(sessionId: $id, input: {number: $to, text: $text}) { messageId } }`,
			map[string]any{"id": id, "to": clusterPhone((i + 1) % clusterSessions), "text": fmt.Sprintf("hello-%d", i)}, nil)
	}
	for i := range ids {
		var inbox struct{ SandboxInbox []struct{ From, Text string } }
		servers[0].must(t, `query($p: String!) { sandboxInbox(phone: $p) { from text } }`, map[string]any{"p": clusterPhone((i + 1) % clusterSessions)}, &inbox)
		n := 0
		for _, m := range inbox.SandboxInbox {
			if m.From == clusterPhone(i) && m.Text == fmt.Sprintf("hello-%d", i) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("hello-%d sent through %s arrived %d times, want once", i, servers[i%3].name, n)
		}
	}

	// The victim holds most sessions; the subscriber and the senders use
	// the survivors.
	counts := countOwners(owners)
	victim := 0
	for i, s := range servers {
		if counts[s.name] > counts[servers[victim].name] {
			victim = i
		}
	}
	var survivors []*server
	for i, s := range servers {
		if i != victim {
			survivors = append(survivors, s)
		}
	}
	subs := subscribeAll(t, survivors[0], ids)

	// Contacts write to every session, round robin, before, during and
	// after the failover.
	var (
		sentMu sync.Mutex
		sent   = map[string]int{} // text → session index
	)
	stopSending := make(chan struct{})
	sending := make(chan error, 1)
	go func() {
		defer close(sending)
		for n := 0; ; n++ {
			select {
			case <-stopSending:
				return
			case <-time.After(50 * time.Millisecond):
			}
			i := n % clusterSessions
			text := fmt.Sprintf("%s%d-%d", foPrefix, i, n)
			err := survivors[n%2].graphql(`mutation($id: ID!, $f: String!, $t: String!) { sandboxSendText(sessionId: $id, from: $f, text: $t) }`,
				map[string]any{"id": ids[i], "f": foContact, "t": text}, nil)
			if err != nil {
				sending <- fmt.Errorf("sandboxSendText %s: %w", text, err)
				return
			}
			sentMu.Lock()
			sent[text] = i
			sentMu.Unlock()
		}
	}()
	time.Sleep(3 * time.Second) // texts before the kill, taken in by every process

	killed := time.Now()
	servers[victim].kill(t)
	t.Logf("SIGKILL %s, holder of %d sessions", servers[victim].name, counts[servers[victim].name])
	owners = waitSpread(t, survivors[0], ids, servers[victim], failoverGoal+15*time.Second)
	took := time.Since(killed)
	t.Logf("all %d sessions CONNECTED again %.1f s after the kill (goal: within %s), spread %v", clusterSessions, took.Seconds(), failoverGoal, countOwners(owners))
	if took > failoverGoal {
		t.Errorf("failover took %s, want within %s", took.Round(100*time.Millisecond), failoverGoal)
	}
	time.Sleep(3 * time.Second) // texts after the failover too
	close(stopSending)
	if err := <-sending; err != nil {
		t.Fatal(err)
	}
	sentMu.Lock()
	want := maps.Clone(sent)
	sentMu.Unlock()
	t.Logf("%d texts sent to the sessions during the test", len(want))

	// Every text reaches the webhook receiver (at least once, a duplicate
	// with the same webhook-id) and the subscriber on a survivor (once).
	survivors[0].waitFor(t, fmt.Sprintf("all %d texts delivered to the webhook and the subscriber", len(want)), time.Minute, func() (bool, error) {
		missingHook, missingSub := 0, 0
		rv.mu.Lock()
		for text := range want {
			if !rv.texts[text] {
				missingHook++
			}
		}
		rv.mu.Unlock()
		for text, i := range want {
			if subs[i].count(text) == 0 {
				missingSub++
			}
		}
		return missingHook == 0 && missingSub == 0, fmt.Errorf("%d not delivered to the webhook, %d not received by the subscriber", missingHook, missingSub)
	})
	for _, s := range subs {
		if err := s.failure(); err != nil {
			t.Errorf("subscriber of session %s: %v", s.sessionID, err)
		}
		for _, text := range s.duplicates() {
			t.Errorf("the subscriber of session %s received %s more than once", s.sessionID, text)
		}
	}
	all, bad := rv.deliveries()
	if len(bad) > 0 {
		t.Errorf("the receiver got %d requests that are not envelopes: %v", len(bad), bad[:min(3, len(bad))])
	}
	idOf := map[string]string{} // text → webhook-id
	for _, d := range all {
		if prev, ok := idOf[d.msg.Text]; ok && prev != d.webhookID {
			t.Errorf("%s delivered with webhook-ids %s and %s: a second event for one text", d.msg.Text, prev, d.webhookID)
		}
		idOf[d.msg.Text] = d.webhookID
	}

	// No device was ever connected twice at once.
	conns := connectionCounts(t, control)
	for i := range ids {
		dev := ""
		for jid := range conns {
			if strings.HasPrefix(jid, clusterPhone(i)+":") {
				dev = jid
			}
		}
		c, ok := conns[dev]
		switch {
		case !ok:
			t.Errorf("the network has no connection of session %d's device", i)
		case c.MaxOpen != 1:
			t.Errorf("session %d's device %s: at most %d connections open at once (%d logins, %d replaced), want 1", i, dev, c.MaxOpen, c.Logins, c.Replaced)
		}
	}
}

// waitSpread waits until every session is CONNECTED and held by a live
// process (not dead), and the sessions are spread evenly over the live
// processes (as many as the others, give or take one); it returns each
// session's owner.
func waitSpread(t *testing.T, via *server, ids []string, dead *server, limit time.Duration) map[string]string {
	t.Helper()
	var owners map[string]string
	via.waitFor(t, "every session CONNECTED, spread evenly", limit, func() (bool, error) {
		var out struct {
			Sessions []struct{ ID, Status, Owner string }
		}
		if err := via.graphql(`{ sessions { id status owner } }`, nil, &out); err != nil {
			return false, err
		}
		owners = map[string]string{}
		notConnected := 0
		for _, s := range out.Sessions {
			owners[s.ID] = s.Owner
			if s.Status != "CONNECTED" || s.Owner == "" || (dead != nil && s.Owner == dead.name) {
				notConnected++
			}
		}
		counts := countOwners(owners)
		lo, hi := len(ids), 0
		for _, n := range counts {
			lo, hi = min(lo, n), max(hi, n)
		}
		live := clusterServers
		if dead != nil {
			live--
		}
		even := len(counts) == live && hi-lo <= 1
		return notConnected == 0 && len(out.Sessions) == len(ids) && even,
			fmt.Errorf("%d of %d not CONNECTED on a live process; owners %v", notConnected, len(out.Sessions), counts)
	})
	return owners
}

func countOwners(owners map[string]string) map[string]int {
	counts := map[string]int{}
	for _, o := range owners {
		if o != "" {
			counts[o]++
		}
	}
	return counts
}

// connectionCounts reads the network's connection counts per device.
func connectionCounts(t *testing.T, control string) map[string]struct{ Open, MaxOpen, Logins, Replaced int } {
	t.Helper()
	res, err := http.Get("http://" + control + "/v1/connections")
	if err != nil {
		t.Fatalf("GET /v1/connections: %v", err)
	}
	defer res.Body.Close()
	var out struct {
		Devices map[string]struct{ Open, MaxOpen, Logins, Replaced int }
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("GET /v1/connections: %v", err)
	}
	return out.Devices
}

// sseSub is one events subscription over server-sent events: the texts of
// the inbound messages it received, counted.
type sseSub struct {
	sessionID string

	mu    sync.Mutex
	texts map[string]int
	err   error // why the stream ended early
}

func (s *sseSub) count(text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.texts[text]
}

func (s *sseSub) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sseSub) duplicates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for text, n := range s.texts {
		if n > 1 {
			out = append(out, text)
		}
	}
	slices.Sort(out)
	return out
}

// subscribeAll opens one events subscription per session on srv (SSE),
// each read by a goroutine the test's cleanup stops.
func subscribeAll(t *testing.T, srv *server, ids []string) []*sseSub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	subs := make([]*sseSub, len(ids))
	for i, id := range ids {
		body, _ := json.Marshal(map[string]any{
			"query":     `subscription($id: ID!) { events(sessionId: $id, kinds: [INBOUND_MESSAGE_UPSERT]) { id data } }`,
			"variables": map[string]any{"id": id},
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.base+"/graphql", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+srv.token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("subscribe to session %s: %v", id, err)
		}
		if res.StatusCode != http.StatusOK {
			res.Body.Close()
			t.Fatalf("subscribe to session %s: HTTP %d", id, res.StatusCode)
		}
		s := &sseSub{sessionID: id, texts: map[string]int{}}
		subs[i] = s
		wg.Go(func() {
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for sc.Scan() {
				line, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var msg struct {
					Data struct {
						Events struct{ Data messageData }
					}
					Errors []testclient.Error
				}
				if err := json.Unmarshal([]byte(line), &msg); err != nil || len(msg.Errors) > 0 {
					s.mu.Lock()
					s.err = fmt.Errorf("stream: %v %v: %.200s", err, msg.Errors, line)
					s.mu.Unlock()
					return
				}
				s.mu.Lock()
				if text := msg.Data.Events.Data.Text; strings.HasPrefix(text, foPrefix) {
					s.texts[text]++
				}
				s.mu.Unlock()
			}
			if ctx.Err() == nil {
				s.mu.Lock()
				s.err = fmt.Errorf("the stream ended: %v", sc.Err())
				s.mu.Unlock()
			}
		})
	}
	return subs
}
