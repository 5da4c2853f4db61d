package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestRestart: a linked session comes back CONNECTED by itself after the
// server restarts on the same data directory, and a send with a delay
// made before the stop is delivered after the start, exactly once. The
// simulated network runs apart (as `wagraph sandbox-network`), so it
// outlives the server.
func TestRestart(t *testing.T) {
	t.Parallel()
	net, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control
	const phone, to = "4915550006001", "4915550006002"

	first := apptest.StartLive(t, cfg)
	sess := first.LinkSession(t, phone)
	res := first.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken,
		`{"number":"`+to+`","text":"see you after the restart","delay":4}`)
	if res.Status != http.StatusOK {
		t.Fatalf("delayed send: %d %s", res.Status, res.Body)
	}
	var env struct {
		Data struct{ MessageID, ScheduledAt, Timestamp string }
	}
	res.JSON(t, &env)
	if env.Data.MessageID == "" || env.Data.ScheduledAt == "" || env.Data.Timestamp != "" {
		t.Fatalf("delayed send answered %s", res.Body)
	}
	if _, err := time.Parse(time.RFC3339, env.Data.ScheduledAt); err != nil {
		t.Fatalf("scheduledAt %q: %v", env.Data.ScheduledAt, err)
	}
	apptest.Settle(t, net, sess)
	first.Stop(t)
	if n := countInbox(t, net, to, env.Data.MessageID); n != 0 {
		t.Fatalf("the delayed message arrived before its time (%d copies)", n)
	}

	second := apptest.StartLive(t, cfg)
	second.WaitStatus(t, sess.ID, "CONNECTED", nil)
	second.Track(sess)
	m := received(t, second, to, env.Data.MessageID)
	if str(m.Text) != "see you after the restart" {
		t.Errorf("received %q", str(m.Text))
	}
	var stored struct{ Message struct{ Status string } }
	for range 100 {
		second.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status } }`,
			map[string]any{"s": sess.ID, "m": env.Data.MessageID}, &stored)
		if stored.Message.Status == "sent" {
			break
		}
		sleep()
	}
	if stored.Message.Status != "sent" {
		t.Errorf("stored status %q, want sent", stored.Message.Status)
	}
	time.Sleep(time.Second) // a duplicate would have arrived by now
	if n := countInbox(t, net, to, env.Data.MessageID); n != 1 {
		t.Errorf("the delayed message arrived %d times, want once", n)
	}
}

// countInbox counts the copies of message id the phone received.
func countInbox(t *testing.T, net *wafake.Network, phone, id string) int {
	t.Helper()
	n := 0
	for _, r := range net.Inbox(phone) {
		if r.ID == id {
			n++
		}
	}
	return n
}
