//go:build unix

package crashtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestIdempotentSendAcrossKill (issue 24, must show 2): the server and the
// network as separate processes. A send made with an Idempotency-Key, the
// server SIGKILLed, started again on its data: the same send retried with
// the key answers the first message id, and the phone has the text once.
// A second send is cut by the kill while it is being made; retried with
// its key after the restart, it is made, once: the phone never has it
// twice.
func TestIdempotentSendAcrossKill(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash test: child processes (make test runs it)")
	}
	cs := newChildren(t)
	loc := dbtest.NewLocation(t)
	control := cs.startNetwork()
	hook := httptest.NewServer(newReceiver(prefix))
	t.Cleanup(hook.Close)
	serve := func(name string) *server {
		s := startServer(t, cs.start(name, serveArgs(loc.DataDir, control, loc.URL)...))
		s.ready(t)
		return s
	}
	first := serve("server-1")
	sessionID := linkSession(t, first, "keys", hook.URL+"/hook")

	done := sendText(t, first, sessionID, "key-done", "Bestellung 1 ist unterwegs")
	if done.status != http.StatusOK {
		t.Fatalf("the first send: %d %s", done.status, done.body)
	}
	// Cut while being made: killed as soon as the request is on its way.
	cut := make(chan sent, 1)
	go func() { cut <- sendText(t, first, sessionID, "key-cut", "Bestellung 2 ist unterwegs") }()
	time.Sleep(20 * time.Millisecond)
	first.kill(t)
	<-cut

	second := serve("server-2")
	second.status(t, sessionID, "CONNECTED", time.Minute)
	again := sendText(t, second, sessionID, "key-done", "Bestellung 1 ist unterwegs")
	if again.status != http.StatusOK || again.messageID != done.messageID {
		t.Errorf("the retry after the kill: %d %s, want the first message id %s", again.status, again.body, done.messageID)
	}
	// The cut send's key may be pending under the killed process. On
	// SQLite (one process) the new one takes it at once; in a cluster a
	// process started under another --node-id takes it once the killed
	// one's row has expired, which it had before the session could run
	// here again (both within the lease TTL): answered at once too, not
	// 409 "still being made" for the key's 90 s lease.
	var retried sent
	second.waitFor(t, "the cut send made on retry", 10*time.Second, func() (bool, error) {
		retried = sendText(t, second, sessionID, "key-cut", "Bestellung 2 ist unterwegs")
		return retried.status == http.StatusOK, nil
	})
	// Retried once more: answered from its key.
	if r := sendText(t, second, sessionID, "key-cut", "Bestellung 2 ist unterwegs"); r.messageID != retried.messageID {
		t.Errorf("a second retry answered %s, the first %s", r.messageID, retried.messageID)
	}
	second.waitFor(t, "both texts on the phone", 30*time.Second, func() (bool, error) {
		counts := phoneTexts(t, second)
		return counts["Bestellung 1 ist unterwegs"] >= 1 && counts["Bestellung 2 ist unterwegs"] >= 1, nil
	})
	time.Sleep(time.Second) // a late duplicate would be in by now
	counts := phoneTexts(t, second)
	for _, text := range []string{"Bestellung 1 ist unterwegs", "Bestellung 2 ist unterwegs"} {
		if counts[text] != 1 {
			t.Errorf("the phone has %q %d times, want once", text, counts[text])
		}
	}
}

// sent is how a REST send answered.
type sent struct {
	status    int
	messageID string
	body      string
}

// sendText posts a text to the contact with an Idempotency-Key; a request
// the kill cut off answers status 0.
func sendText(t *testing.T, s *server, sessionID, key, text string) sent {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"number": contact, "text": text})
	req, err := http.NewRequest(http.MethodPost, s.base+"/api/v1/session/"+sessionID+"/message/text", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Idempotency-Key", key)
	res, err := s.http.Do(req)
	if err != nil {
		return sent{}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var env struct{ Data struct{ MessageID string } }
	_ = json.Unmarshal(raw, &env)
	return sent{status: res.StatusCode, messageID: env.Data.MessageID, body: string(raw)}
}

// phoneTexts counts the texts the contact's phone received, as it
// decrypted them.
func phoneTexts(t *testing.T, s *server) map[string]int {
	t.Helper()
	var out struct {
		SandboxInbox []struct{ Text *string }
	}
	s.must(t, `query($p: String!) { sandboxInbox(phone: $p) { text } }`, map[string]any{"p": contact}, &out)
	counts := map[string]int{}
	for _, m := range out.SandboxInbox {
		if m.Text != nil {
			counts[*m.Text]++
		}
	}
	return counts
}
