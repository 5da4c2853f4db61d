package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/wafake"
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
			if d["callId"] == call.SandboxCall && d["status"] == "offer" && d["fromPhone"] == caller && d["isVideo"] == true {
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
		rejected = rejected || (d["callId"] == call.SandboxCall && d["status"] == "reject" && d["fromPhone"] == phone)
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

// TestRejectCallRefusals: the gateway knows the calls it was offered. A
// call id it never saw is NOT_FOUND/404, a from that is not the call's
// caller is BAD_USER_INPUT/400 naming from, a call already rejected, or
// that the caller hung up, is CONFLICT/409; each named in words, and none
// stores or delivers a call event. The call is rejected once.
func TestRejectCallRefusals(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const caller, other = "4915550280102", "4915550280103"
	net := s.Network(t)
	account, err := whatsapp.ParseJID(apptest.LinkedPhone + "@s.whatsapp.net")
	if err != nil {
		t.Fatal(err)
	}
	offer := func() string {
		t.Helper()
		var call struct{ SandboxCall string }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxCall(sessionId: $s, from: $f) }`,
			map[string]any{"s": sess.ID, "f": caller}, &call)
		testclient.Until(t, 10*time.Second, "the call offer as an event", func() bool {
			for _, d := range eventData(t, s, sess.ID, "CALL") {
				if d["callId"] == call.SandboxCall && d["status"] == "offer" {
					return true
				}
			}
			return false
		})
		return call.SandboxCall
	}
	reject := func(callID, from string) apptest.Response {
		t.Helper()
		return s.REST(t, "POST", "/session/"+sess.ID+"/call/"+callID+"/reject", apptest.AdminToken, `{"from":"`+from+`"}`)
	}
	rejects := func(callID string) int {
		t.Helper()
		n := 0
		for _, d := range eventData(t, s, sess.ID, "CALL") {
			if d["callId"] == callID && d["status"] == "reject" {
				n++
			}
		}
		return n
	}
	want := func(what string, r apptest.Response, status int, words ...string) {
		t.Helper()
		msg := r.Message(t)
		ok := r.Status == status
		for _, w := range words {
			ok = ok && strings.Contains(msg, w)
		}
		if !ok {
			t.Errorf("%s: %d %q, want %d saying %q", what, r.Status, msg, status, words)
		}
	}

	ringing := offer()
	const unknown = "0123456789ABCDEF0123456789ABCDEF"
	want("an unknown call", reject(unknown, caller), http.StatusNotFound, unknown, "no call")
	res := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: ID!, $f: String!) { rejectCall(sessionId: $s, callId: $c, from: $f) }`,
		map[string]any{"s": sess.ID, "c": unknown, "f": caller})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("GraphQL, an unknown call: %+v, want one NOT_FOUND", res.Errors)
	}
	want("from not the caller", reject(ringing, other), http.StatusBadRequest, "from", caller, other)
	if n := rejects(ringing); n != 0 {
		t.Fatalf("%d reject events after the refusals, want none", n)
	}
	if a, _ := net.Account(caller); a.LastCallRejected == nil || *a.LastCallRejected {
		t.Fatalf("the caller's phone: lastCallRejected %v after the refusals, want false", a.LastCallRejected)
	}

	want("the caller's call", reject(ringing, caller), http.StatusOK)
	want("the same call again", reject(ringing, caller), http.StatusConflict, ringing, "already rejected")
	if n := rejects(ringing); n != 1 {
		t.Errorf("%d reject events of the call, want 1", n)
	}

	// A call the caller hung up has ended: nothing to reject.
	hungUp := offer()
	if _, err := net.Call(caller, account, wafake.CallStanza{Stage: "terminate", CallID: hungUp, Reason: "timeout"}); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "the hang-up as an event", func() bool {
		for _, d := range eventData(t, s, sess.ID, "CALL") {
			if d["callId"] == hungUp && d["status"] == "terminate" {
				return true
			}
		}
		return false
	})
	want("a call that ended", reject(hungUp, caller), http.StatusConflict, hungUp, "ended")
	if n := rejects(hungUp) + rejects(unknown); n != 0 {
		t.Errorf("%d reject events of refused rejections, want none", n)
	}
}
