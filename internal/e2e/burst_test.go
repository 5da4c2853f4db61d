package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestSandboxSendBurst: sandboxSendBurst queues the texts and the session
// takes them all in (it acknowledges a message only once it is stored);
// a count out of 1..10000 is refused naming count and the rule; the control
// is gated like the others.
func TestSandboxSendBurst(t *testing.T) {
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550012002"
	const burst = `mutation($s: ID!, $f: String!, $n: Int!) { sandboxSendBurst(sessionId: $s, from: $f, count: $n, prefix: "lead-") }`

	var out struct{ SandboxSendBurst int }
	s.MustGraphQL(t, apptest.AdminToken, burst, map[string]any{"s": sess.ID, "f": contact, "n": 200}, &out)
	if out.SandboxSendBurst != 200 {
		t.Errorf("queued %d, want 200", out.SandboxSendBurst)
	}
	dev, err := whatsapp.ParseJID(sess.JID)
	if err != nil {
		t.Fatal(err)
	}
	net := s.Network(t)
	for deadline := time.Now().Add(30 * time.Second); net.Unacked(dev) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session has not acknowledged %d of the 200 texts within 30 s", net.Unacked(dev))
		}
	}

	for _, n := range []int{0, 10001} {
		res := s.GraphQL(t, apptest.AdminToken, burst, map[string]any{"s": sess.ID, "f": contact, "n": n})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != "count" ||
			!strings.Contains(res.Errors[0].Message, "from 1 to 10000") {
			t.Errorf("a burst of %d: %+v, want BAD_USER_INPUT on count naming 1 to 10000", n, res.Errors)
		}
	}
	var u struct{ CreateUser struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "other") { token } }`, nil, &u)
	res := s.GraphQL(t, u.CreateUser.Token, burst, map[string]any{"s": sess.ID, "f": contact, "n": 1})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("another user's burst: %+v, want NOT_FOUND", res.Errors)
	}

	plain := apptest.Start(t, apptest.Config(t))
	id := plain.CreateSession(t, "plain")
	res = plain.GraphQL(t, apptest.AdminToken, burst, map[string]any{"s": id, "f": contact, "n": 1})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Message != "sandbox mode is off" {
		t.Errorf("outside sandbox mode: %+v, want BAD_USER_INPUT sandbox mode is off", res.Errors)
	}
}
