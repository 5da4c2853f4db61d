package e2e

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// putSettings changes the session's settings over REST and returns what
// it answered.
func putSettings(t *testing.T, s *apptest.Server, sessionID, body string) map[string]any {
	t.Helper()
	res := s.REST(t, "PUT", "/session/"+sessionID+"/settings", apptest.AdminToken, body)
	if res.Status != http.StatusOK {
		t.Fatalf("PUT settings %s: %d %s", body, res.Status, res.Body)
	}
	var env struct{ Data map[string]any }
	res.JSON(t, &env)
	return env.Data
}

// inboxTexts are the texts phone's account received from the session's
// account, in the order they arrived.
func inboxTexts(t *testing.T, s *apptest.Server, phone string) []string {
	t.Helper()
	var out struct {
		SandboxInbox []struct {
			From string
			Text *string
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxInbox(phone: $p) { from text } }`, map[string]any{"p": phone}, &out)
	var texts []string
	for _, m := range out.SandboxInbox {
		if m.Text != nil && m.From == apptest.LinkedPhone {
			texts = append(texts, *m.Text)
		}
	}
	return texts
}

// TestSessionSettings: the settings read back as given over GraphQL and
// REST, a field left out keeps its value, a value breaking its rule is
// refused naming the field and the rule with nothing changed, and the
// proxy's password is never shown.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	log, logs := logtest.New(slog.LevelDebug)
	s, sess := apptest.StartLinkedWith(t, func(_ *config.Config, opts *app.Options) { opts.Logger = log })
	res := s.REST(t, "GET", "/session/"+sess.ID+"/settings", apptest.AdminToken, "")
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body),
		`{"sendRate":null,"sendJitter":"0s","simulateTyping":false,"autoMarkRead":false,"autoRejectCalls":false,"callRejectMessage":null,"proxy":null}`) {
		t.Fatalf("the defaults: %d %s", res.Status, res.Body)
	}
	putSettings(t, s, sess.ID, `{"sendRate":"30/m","proxy":"socks5://bob:hunter2@127.0.0.1:1080"}`)
	var out struct {
		UpdateSessionSettings struct {
			Settings struct {
				SendRate, SendJitter, Proxy, CallRejectMessage string
				AutoRejectCalls                                bool
			}
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateSessionSettings(sessionId: $s, input: {sendJitter: "1.5s", autoRejectCalls: true, callRejectMessage: "Bitte schreiben"}) {
		settings { sendRate sendJitter proxy autoRejectCalls callRejectMessage } } }`, map[string]any{"s": sess.ID}, &out)
	got := out.UpdateSessionSettings.Settings
	if got.SendRate != "30/m" || got.SendJitter != "1.5s" || got.Proxy != "socks5://bob:***@127.0.0.1:1080" || !got.AutoRejectCalls || got.CallRejectMessage != "Bitte schreiben" {
		t.Errorf("after two updates: %+v", got)
	}
	for _, tt := range []struct{ body, want string }{
		{`{"sendRate":"30 per minute"}`, `sendRate must be "<n>/s", "<n>/m" or "<n>/h"`},
		{`{"sendRate":"5000/s"}`, "sendRate must allow at most one send per 1ms"},
		{`{"sendJitter":"2h"}`, "sendJitter must be from 0s to 1m0s"},
		{`{"proxy":"ftp://bob:hunter3@127.0.0.1:21"}`, "proxy must start with socks5://, http:// or https://"},
		{`{"autoMarkRead":true,"proxy":"socks5://bob:hunter3@127.0.0.1"}`, "proxy must name a host and a port"},
	} {
		r := s.REST(t, "PUT", "/session/"+sess.ID+"/settings", apptest.AdminToken, tt.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), tt.want) {
			t.Errorf("PUT %s: %d %q, want 400 saying %q", tt.body, r.Status, r.Message(t), tt.want)
		}
		if strings.Contains(string(r.Body), "hunter3") {
			t.Errorf("PUT %s: the answer repeats the password: %s", tt.body, r.Body)
		}
	}
	r := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateSessionSettings(sessionId: $s, input: {sendRate: "fast"}) { id } }`, map[string]any{"s": sess.ID})
	if len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "input.sendRate" {
		t.Errorf("GraphQL's refusal of a bad rate: %+v, want BAD_USER_INPUT naming input.sendRate", r.Errors)
	}
	res = s.REST(t, "GET", "/session/"+sess.ID+"/settings", apptest.AdminToken, "")
	want := `{"sendRate":"30/m","sendJitter":"1.5s","simulateTyping":false,"autoMarkRead":false,"autoRejectCalls":true,"callRejectMessage":"Bitte schreiben","proxy":"socks5://bob:***@127.0.0.1:1080"}`
	if !strings.Contains(string(res.Body), want) {
		t.Errorf("after the refusals: %s, want %s", res.Body, want)
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Error("the server logged the proxy's password")
	}
}

// TestSendRateQueue (issue 32, must show 2): with sendRate "2/s", ten sends
// accepted at once (the first sent, the others with scheduledAt) reach the
// contact's phone in the order they were accepted, over about 5 s.
func TestSendRateQueue(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550320001"
	putSettings(t, s, sess.ID, `{"sendRate":"2/s"}`)
	var want []string
	began := time.Now()
	for i := range 10 {
		text := fmt.Sprintf("Nachricht %d", i+1)
		want = append(want, text)
		raw, _ := json.Marshal(map[string]string{"number": contact, "text": text})
		res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, string(raw))
		var env struct {
			Data struct{ Timestamp, ScheduledAt *string }
		}
		res.JSON(t, &env)
		if res.Status != http.StatusOK || (i == 0) != (env.Data.Timestamp != nil) || (i > 0) != (env.Data.ScheduledAt != nil) {
			t.Fatalf("send %d: %d %s, want the first sent now and the rest scheduled", i+1, res.Status, res.Body)
		}
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("accepting ten sends took %s: they are not accepted at once", took)
	}
	var got []string
	arrived := map[int]time.Duration{} // when the inbox first held n texts
	testclient.Until(t, 20*time.Second, "ten texts on the contact's phone", func() bool {
		got = inboxTexts(t, s, contact)
		if _, seen := arrived[len(got)]; !seen {
			arrived[len(got)] = time.Since(began)
		}
		return len(got) >= 10
	})
	if !slices.Equal(got, want) {
		t.Errorf("the phone got %q, want %q in order", got, want)
	}
	// Nine waits of 0.5 s after the first: about 4.5 s, not at once.
	if last := arrived[10]; last < 4*time.Second || last > 10*time.Second {
		t.Errorf("the tenth text arrived after %s, want about 4.5 s", last)
	}
	if n, ok := arrived[5]; ok && n > 4*time.Second {
		t.Errorf("the fifth text arrived after %s, want about 2 s", n)
	}
}

// TestAutoMarkRead: with autoMarkRead an inbound message is marked read
// once stored (the contact's phone gets the receipt); without it, not.
func TestAutoMarkRead(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, contact = apptest.LinkedPhone, "4915550320002"
	before, err := n.SendText(contact, phone, "Ungelesen")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, before)
	putSettings(t, s, sess.ID, `{"autoMarkRead":true}`)
	after, err := n.SendText(contact, phone, "Gelesen")
	if err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "a read receipt for the message after the setting", func() bool {
		return slices.Contains(networkAccount(t, s, contact).readBy(phone), after)
	})
	if got := networkAccount(t, s, contact).readBy(phone); slices.Contains(got, before) {
		t.Errorf("the message stored before autoMarkRead was read too: %v", got)
	}
}

// TestAutoRejectCalls: with autoRejectCalls an incoming call is rejected
// (the caller's phone learns it) and callRejectMessage reaches the caller.
func TestAutoRejectCalls(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const caller = "4915550320003"
	putSettings(t, s, sess.ID, `{"autoRejectCalls":true,"callRejectMessage":"Ich kann gerade nicht telefonieren, bitte schreib mir."}`)
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!) { sandboxCall(sessionId: $s, from: $f) }`,
		map[string]any{"s": sess.ID, "f": caller}, nil)
	var view struct {
		SandboxAccount struct{ LastCallRejected *bool }
	}
	testclient.Until(t, 10*time.Second, "the call rejected on the caller's phone", func() bool {
		s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { lastCallRejected } }`, map[string]any{"p": caller}, &view)
		return view.SandboxAccount.LastCallRejected != nil && *view.SandboxAccount.LastCallRejected
	})
	testclient.Until(t, 10*time.Second, "the reject message on the caller's phone", func() bool {
		return slices.Equal(inboxTexts(t, s, caller), []string{"Ich kann gerade nicht telefonieren, bitte schreib mir."})
	})
}

// TestSimulateTyping: with simulateTyping a text is preceded on the
// contact's phone by composing, then paused, and its send waits the typing
// time.
func TestSimulateTyping(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550320004"
	putSettings(t, s, sess.ID, `{"simulateTyping":true}`)
	began := time.Now()
	restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "Einen Moment, ich tippe"})
	if took := time.Since(began); took < time.Second {
		t.Errorf("the send answered after %s, want it to type for over a second first", took)
	}
	var states []string
	testclient.Until(t, 5*time.Second, "composing then paused on the contact's phone", func() bool {
		states = nil
		for _, c := range networkAccount(t, s, contact).ChatStates {
			if c.From == apptest.LinkedPhone {
				states = append(states, c.State)
			}
		}
		return len(states) >= 2
	})
	if !slices.Equal(states, []string{"composing", "paused"}) {
		t.Errorf("chat states %v, want composing, paused", states)
	}
	if got := inboxTexts(t, s, contact); !slices.Equal(got, []string{"Einen Moment, ich tippe"}) {
		t.Errorf("the phone got %q", got)
	}
}
