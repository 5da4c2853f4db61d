//go:build unix

package crashtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestSendRateQueueAcrossKill (issue 32, must show 2): the server and the
// network as separate processes. With sendRate "2/s", ten texts accepted at
// once are queued; the server is SIGKILLed while the queue is half sent and
// started again on its data: the rest still reach the contact's phone, in
// the order they were accepted, none lost and none twice.
func TestSendRateQueueAcrossKill(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash test: child processes (make test runs it)")
	}
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	control := cs.startNetwork()
	hook := httptest.NewServer(newReceiver(prefix))
	t.Cleanup(hook.Close)
	args := serveArgs(loc.DataDir, control, loc.URL)
	if loc.URL != "" { // a cluster of one: the killed process's lease ends soon
		args = append(args, "--lease-ttl", "3s")
	}
	serve := func(name string) *server {
		s := startServer(t, cs.start(name, args...))
		s.ready(t)
		return s
	}
	first := serve("server-1")
	sessionID := linkSession(t, first, "paced", hook.URL+"/hook")
	if status, body := restCall(t, first, "PUT", "/session/"+sessionID+"/settings", `{"sendRate":"2/s"}`); status != http.StatusOK {
		t.Fatalf("PUT settings: %d %s", status, body)
	}
	var want []string
	for i := range 10 {
		text := fmt.Sprintf("Lieferung %d", i+1)
		want = append(want, text)
		raw, _ := json.Marshal(map[string]string{"number": contact, "text": text})
		if status, body := restCall(t, first, "POST", "/session/"+sessionID+"/message/text", string(raw)); status != http.StatusOK {
			t.Fatalf("send %d: %d %s", i+1, status, body)
		}
	}
	var atKill int // texts on the phone just before the kill: no more come from that process
	first.waitFor(t, "three texts on the phone", 10*time.Second, func() (bool, error) {
		atKill = len(phoneInbox(t, first))
		return atKill >= 3, nil
	})
	first.kill(t)
	if atKill >= 10 {
		t.Fatalf("all %d texts were out before the kill: nothing was queued across it", atKill)
	}
	t.Logf("%d of 10 texts on the phone at the kill", atKill)

	second := serve("server-2")
	second.status(t, sessionID, "CONNECTED", time.Minute)
	rest(t, second, want, atKill)
}

// TestSendRateQueueFailover (issue 32, must show 2, in a cluster): two
// processes on one PostgreSQL database. With sendRate "2/s" set through
// one, ten texts accepted through both in turn are one queue; the process
// running the session is SIGKILLed half way, the other takes the session
// over and sends the rest: in the order they were accepted, none lost and
// none twice.
func TestSendRateQueueFailover(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("a cluster shares one PostgreSQL database: the PostgreSQL pass of make test runs this test")
	}
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	control := cs.startNetwork()
	hook := httptest.NewServer(newReceiver(prefix))
	t.Cleanup(hook.Close)
	servers := map[string]*server{}
	for _, name := range []string{"node-1", "node-2"} {
		c := cs.start(name, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database-url", loc.URL,
			"--node-id", name, "--lease-ttl", "3s", "--sandbox-network", control, "--admin-token", adminToken, "--allow-private-urls",
			"--rate", "1000/s,1000", "--log-format", "json")
		servers[name] = &server{child: c, base: "http://" + c.listenAddr(t), token: adminToken, http: &http.Client{Timeout: time.Minute}}
	}
	for _, s := range servers {
		s.ready(t)
	}
	sessionID := linkSession(t, servers["node-1"], "paced", hook.URL+"/hook")
	var owner struct{ Session struct{ Owner *string } }
	servers["node-2"].waitFor(t, "the session's holder", 30*time.Second, func() (bool, error) {
		servers["node-2"].must(t, `query($id: ID!) { session(id: $id) { owner } }`, map[string]any{"id": sessionID}, &owner)
		return owner.Session.Owner != nil, nil
	})
	holder := servers[*owner.Session.Owner]
	other := servers["node-1"]
	if holder == other {
		other = servers["node-2"]
	}
	if status, body := restCall(t, other, "PUT", "/session/"+sessionID+"/settings", `{"sendRate":"2/s"}`); status != http.StatusOK {
		t.Fatalf("PUT settings: %d %s", status, body)
	}
	var want []string
	for i := range 10 {
		via := []*server{holder, other}[i%2]
		text := fmt.Sprintf("Paket %d", i+1)
		want = append(want, text)
		raw, _ := json.Marshal(map[string]string{"number": contact, "text": text})
		if status, body := restCall(t, via, "POST", "/session/"+sessionID+"/message/text", string(raw)); status != http.StatusOK {
			t.Fatalf("send %d through %s: %d %s", i+1, via.name, status, body)
		}
	}
	var atKill int
	other.waitFor(t, "three texts on the phone", 10*time.Second, func() (bool, error) {
		atKill = len(phoneInbox(t, other))
		return atKill >= 3, nil
	})
	holder.kill(t)
	if atKill >= 10 {
		t.Fatalf("all %d texts were out before the kill: nothing was queued across it", atKill)
	}
	t.Logf("%d of 10 texts on the phone when %s was killed", atKill, holder.name)
	rest(t, other, want, atKill)
}

// rest waits for the texts queued across the kill, the ones after the
// atKill already on the phone: all of want, each once, in order, and still
// at the rate of 2/s (the ones overdue by the downtime are not sent at
// once).
func rest(t *testing.T, s *server, want []string, atKill int) {
	t.Helper()
	var first, last time.Time // when the first and the last of the rest arrived
	s.waitFor(t, "ten texts on the phone", time.Minute, func() (bool, error) {
		n := len(phoneInbox(t, s))
		if n > atKill && first.IsZero() {
			first = time.Now()
		}
		last = time.Now()
		return n >= len(want), nil
	})
	// Polled: each arrival is seen up to a poll late, so a little slack.
	if spread, least := last.Sub(first), time.Duration(len(want)-atKill-1)*400*time.Millisecond; spread < least {
		t.Errorf("the %d texts after the kill came within %s, want at least %s at 2/s", len(want)-atKill, spread, least)
	}
	time.Sleep(time.Second) // a late duplicate would be in by now
	if got := phoneInbox(t, s); !slices.Equal(got, want) {
		t.Errorf("the phone got %q, want %q: each once, in order", got, want)
	}
}

// restCall makes one REST request as the admin; a request cut off answers
// status 0.
func restCall(t *testing.T, s *server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+"/api/v1"+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// phoneInbox is the texts the contact's phone received, in the order they
// arrived (the network is a process of its own: it outlives the server).
func phoneInbox(t *testing.T, s *server) []string {
	t.Helper()
	var out struct {
		SandboxInbox []struct{ Text *string }
	}
	s.must(t, `query($p: String!) { sandboxInbox(phone: $p) { text } }`, map[string]any{"p": contact}, &out)
	var texts []string
	for _, m := range out.SandboxInbox {
		if m.Text != nil {
			texts = append(texts, *m.Text)
		}
	}
	return texts
}
