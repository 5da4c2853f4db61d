package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp"
)

// limitsOf reads Session.limits by GraphQL and by REST and checks they
// agree; it returns reachoutTimelockUntil ("" when null). GraphQL is read
// before and after REST: when the limits changed in between (the
// notification arrived), the reads are taken again.
func limitsOf(t *testing.T, s *apptest.Server, sessionID string) string {
	t.Helper()
	graphQL := func() (until string, quota *int) {
		var out struct {
			Session struct {
				Limits struct {
					ReachoutTimelockUntil *string
					NewContactQuota       *int
				}
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { limits { reachoutTimelockUntil newContactQuota } } }`,
			map[string]any{"id": sessionID}, &out)
		return str(out.Session.Limits.ReachoutTimelockUntil), out.Session.Limits.NewContactQuota
	}
	for try := 1; ; try++ {
		before, quota := graphQL()
		res := s.REST(t, "GET", "/session/"+sessionID+"/limits", apptest.AdminToken, "")
		var env struct {
			Status string
			Data   struct {
				ReachoutTimelockUntil *string
				NewContactQuota       *int
			}
		}
		res.JSON(t, &env)
		after, _ := graphQL()
		if before != after && try < 3 {
			continue
		}
		if res.Status != http.StatusOK || before != after || before != str(env.Data.ReachoutTimelockUntil) || quota != nil || env.Data.NewContactQuota != nil {
			t.Fatalf("limits: GraphQL %q then %q (quota %v), REST %d %s", before, after, quota, res.Status, res.Body)
		}
		return before
	}
}

// timelockUpdates is the reachoutTimelockUntil of each connection.update
// the session published for its limits ("" for null).
func timelockUpdates(t *testing.T, s *apptest.Server, sessionID string) []string {
	t.Helper()
	var out []string
	for _, d := range eventData(t, s, sessionID, "CONNECTION_UPDATE") {
		l, ok := d["limits"].(map[string]any)
		if !ok {
			continue
		}
		if d["reason"] != whatsapp.LimitReachoutTimelock || d["status"] != "CONNECTED" {
			t.Errorf("a limits connection.update %v, want reason %q and the status", d, whatsapp.LimitReachoutTimelock)
		}
		until, _ := l["reachoutTimelockUntil"].(string)
		out = append(out, until)
	}
	return out
}

// TestReachoutTimelock (issue 32): the simulated network puts the
// session's account under a reach-out timelock as WhatsApp does (the mex
// notification, error 463 for contacts new to the account). The session
// shows it in Session.limits (GraphQL, REST) and a connection.update; a
// send to a new contact fails WHATSAPP_REFUSED/422 naming the limit and
// its end, published as messages.send failed, and reaches nobody; a
// known contact is still reached; the limit survives a restart; a
// scheduled send to a new contact, refused when due, is held (still
// scheduled, delivered to nobody) and sent once the timelock is lifted,
// which shows null again.
func TestReachoutTimelock(t *testing.T) {
	t.Parallel()
	const known, stranger, later = "4915550321001", "4915550321002", "4915550321003"
	live := func(_ *config.Config, o *app.Options) { o.Now = nil } // scheduled sends run on the wall clock
	s, sess := apptest.StartLinkedWith(t, live)
	restSend(t, s, sess.ID, "text", map[string]any{"number": known, "text": "before the timelock"})
	if got := limitsOf(t, s, sess.ID); got != "" {
		t.Fatalf("limits before WhatsApp said anything: %q, want null", got)
	}

	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { sandboxReachoutTimelock(sessionId: $id, seconds: 3600) }`, map[string]any{"id": sess.ID}, nil)
	var until string
	testclient.Until(t, 10*time.Second, "Session.limits shows the timelock", func() bool { until = limitsOf(t, s, sess.ID); return until != "" })
	end, err := time.Parse(time.RFC3339, until)
	if err != nil || end.Before(time.Now().Add(59*time.Minute)) || end.After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("reachoutTimelockUntil %q, want about an hour from now (%v)", until, err)
	}
	// The limits are stored before their event: it follows.
	var updates []string
	testclient.Until(t, 10*time.Second, "the limit's connection.update", func() bool {
		updates = timelockUpdates(t, s, sess.ID)
		return len(updates) > 0
	})
	if len(updates) != 1 || updates[0] != until {
		t.Fatalf("limits connection.updates %q, want one with %s", updates, until)
	}

	res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"`+stranger+`","text":"hello stranger"}`)
	msg := res.Message(t)
	if res.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(msg, whatsapp.LimitReachoutTimelock+":") || !strings.Contains(msg, end.UTC().Format(time.RFC3339)) {
		t.Fatalf("send to a new contact: %d %s, want 422 naming %q and its end %s", res.Status, res.Body, whatsapp.LimitReachoutTimelock, end.UTC().Format(time.RFC3339))
	}
	var failed bool
	for _, d := range eventData(t, s, sess.ID, "MESSAGES_SEND") {
		if d["status"] == "failed" && d["error"] == msg {
			failed = true
		}
	}
	if !failed {
		t.Errorf("no messages.send failed with %q", msg)
	}
	restSend(t, s, sess.ID, "text", map[string]any{"number": known, "text": "a known contact is still reached"})

	// The limit is stored: a restart still shows it.
	cfg := s.Config
	s.Stop(t)
	s = apptest.StartLive(t, cfg)
	s.WaitStatus(t, sess.ID, "CONNECTED", nil)
	s.Track(sess)
	if got := limitsOf(t, s, sess.ID); got != until {
		t.Fatalf("limits after a restart %q, want %s", got, until)
	}

	scheduled := restSend(t, s, sess.ID, "text", map[string]any{"number": later, "text": "held until the timelock ends", "delay": 1})
	// Tried once when due, refused, then held: still scheduled, delivered to nobody.
	testclient.Until(t, 10*time.Second, "the scheduled send's refusal", func() bool {
		for _, d := range eventData(t, s, sess.ID, "MESSAGES_SEND") {
			if d["id"] == scheduled && d["status"] == "failed" {
				return true
			}
		}
		return false
	})
	if st := storedStatus(t, s, sess.ID, scheduled); st != "scheduled" {
		t.Fatalf("the refused scheduled send is %q, want scheduled (held until the limit ends)", st)
	}

	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { sandboxReachoutTimelock(sessionId: $id, seconds: 0) }`, map[string]any{"id": sess.ID}, nil)
	testclient.Until(t, 10*time.Second, "Session.limits shows none", func() bool { return limitsOf(t, s, sess.ID) == "" })
	testclient.Until(t, 10*time.Second, "the lifting's connection.update", func() bool {
		updates = timelockUpdates(t, s, sess.ID)
		return len(updates) > 1
	})
	if len(updates) != 2 || updates[1] != "" {
		t.Fatalf("limits connection.updates %q, want the timelock then its lifting (null)", updates)
	}
	if m := received(t, s, later, scheduled); str(m.Text) != "held until the timelock ends" {
		t.Errorf("the held send arrived as %q", str(m.Text))
	}
	for _, m := range inbox(t, s, stranger) {
		t.Errorf("the refused send reached %s: %+v", stranger, m)
	}
}

// storedStatus is the stored status of message id of the session.
func storedStatus(t *testing.T, s *apptest.Server, sessionID, id string) string {
	t.Helper()
	var out struct{ Message struct{ Status string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status } }`,
		map[string]any{"s": sessionID, "m": id}, &out)
	return out.Message.Status
}
