package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestRejectCall: a contact calls the session's account; the session gets
// the offer as a call event and rejects it (REST): the caller's phone learns
// the call was rejected, and a call event with status reject follows.
// Bad input names its field.
func TestRejectCall(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, caller = apptest.LinkedPhone, "4915550280002"
	var call struct{ SandboxCall string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxCall(sessionId: $s, from: $f, video: true) }`,
		map[string]any{"s": sess.ID, "f": caller}, &call)
	testclient.Until(t, 10*time.Second, "the call offer as an event", func() bool {
		for _, d := range eventData(t, s, sess.ID, "CALL") {
			if d["id"] == call.SandboxCall && d["status"] == "offer" && d["fromPhone"] == caller && d["isVideo"] == true {
				return true
			}
		}
		return false
	})
	var view struct {
		SandboxAccount struct{ LastCallRejected *bool }
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { lastCallRejected } }`, map[string]any{"p": caller}, &view)
	if r := view.SandboxAccount.LastCallRejected; r == nil || *r {
		t.Fatalf("before the rejection lastCallRejected is %v, want false", r)
	}

	res := s.REST(t, "POST", "/session/"+sess.ID+"/call/"+call.SandboxCall+"/reject", apptest.AdminToken, `{"from":"`+caller+`"}`)
	if res.Status != http.StatusOK {
		t.Fatalf("reject: %d %s", res.Status, res.Body)
	}
	testclient.Until(t, 5*time.Second, "the caller's phone told of the rejection", func() bool {
		s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { lastCallRejected } }`, map[string]any{"p": caller}, &view)
		return view.SandboxAccount.LastCallRejected != nil && *view.SandboxAccount.LastCallRejected
	})
	var rejected bool
	for _, d := range eventData(t, s, sess.ID, "CALL") {
		rejected = rejected || (d["id"] == call.SandboxCall && d["status"] == "reject" && d["fromPhone"] == phone)
	}
	if !rejected {
		t.Error("no call event with status reject")
	}
	for _, tt := range []struct{ path, body, want string }{
		{"/call/not-an-id/reject", `{"from":"` + caller + `"}`, "callId must be the id of a call event"},
		{"/call/" + call.SandboxCall + "/reject", `{"from":"120363025246125888@g.us"}`, "from must be the caller"},
		{"/call/" + call.SandboxCall + "/reject", `{}`, "from must not be empty"},
	} {
		r := s.REST(t, "POST", "/session/"+sess.ID+tt.path, apptest.AdminToken, tt.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), tt.want) {
			t.Errorf("POST %s %s: %d %q, want 400 saying %q", tt.path, tt.body, r.Status, r.Message(t), tt.want)
		}
	}
}
