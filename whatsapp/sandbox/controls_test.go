package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// badInput is a request its control must refuse, naming field, before any
// network work.
type badInput struct {
	path  string // the control's
	field string
	req   any // as a raw POST sends it
	do    func(context.Context, Network) error
}

func refused[Req Request[Req, Res], Res any](field string, req Req) badInput {
	return badInput{path: req.control().path(), field: field, req: req, do: func(ctx context.Context, n Network) error {
		_, err := Do(ctx, n, req)
		return err
	}}
}

func badInputs() []badInput {
	const me, user, contact = "491701234567", "491701234567@s.whatsapp.net", "4915112345678"
	return []badInput{
		refused("qrCode", LinkDevice{QRCode: "nonsense", Phone: me}),
		refused("phone", LinkDevice{QRCode: "nonsense", Phone: "4917012340000"}),
		refused("code", EnterPairingCode{Phone: me, Code: "ABC"}),
		refused("phone", RequirePasskey{Phone: "4917012340000"}),
		refused("publicKey", PasskeyAssertion{Phone: me, PublicKey: json.RawMessage(`[1]`)}),
		refused("phone", Inbox{Phone: "12"}),
		refused("messageId", Media{Phone: me, MessageID: " "}),
		refused("to", SendText{From: contact, To: me, Text: "hi"}),
		refused("from", SendText{From: "4915100000000", To: user, Text: "hi"}),
		refused("mimetype", SendImage{From: contact, To: user, Image: []byte("plain"), Mimetype: "text/plain"}),
		refused("device", ReachoutTimelock{Device: me, Seconds: 60}),
		refused("seconds", ReachoutTimelock{Device: "491701234567:3@s.whatsapp.net", Seconds: -1}),
		refused("seconds", ReachoutTimelock{Device: "491701234567:3@s.whatsapp.net", Seconds: 30*24*3600 + 1}),
		refused("count", SendBurst{From: contact, To: user, Count: 0, Prefix: "x"}),
		refused("emoji", React{From: contact, To: user, MessageID: "3EB0", Emoji: ""}),
		refused("type", Receipt{From: contact, To: user, MessageID: "3EB0", Type: "seen"}),
		refused("state", Presence{From: contact, To: user, State: "typing"}),
		refused("to", Call{From: contact, To: "120363025246125888@g.us"}),
		refused("pollId", Vote{From: contact, To: user, PollID: " "}),
		refused("options[1]", Vote{From: contact, To: user, PollID: "3EB0", Options: []string{"a", ""}}),
		refused("options", Vote{From: contact, To: user, PollID: "3EB0", Options: strings.Split("a b c d e f g h i j k l m", " ")}),
		refused("text", Edit{From: contact, To: user, MessageID: "3EB0"}),
		refused("sentAt", Edit{From: contact, To: user, MessageID: "3EB0", Text: "late", SentAt: time.Now().Add(maxSentAtSkew + time.Hour)}),
		refused("sentAt", Edit{From: contact, To: user, MessageID: "3EB0", Text: "early", SentAt: time.Now().Add(-maxSentAtSkew - time.Hour)}),
		refused("messageId", Revoke{From: contact, To: user, MessageID: ""}),
		refused("jid", Group{JID: user}),
		refused("jid", RequestJoin{JID: user, From: contact}),
		refused("from", RequestJoin{JID: "120363025246125888@g.us", From: "12"}),
		refused("phone", Account{Phone: "12ab"}),
		refused("phone", SetProfile{Phone: "4917012340000"}),
		refused("about", SetProfile{Phone: contact, About: ptr(strings.Repeat("a", 140))}),
		refused("picture", SetProfile{Phone: contact, Picture: ptr([]byte("a PNG"))}),
		refused("device", DropConnection{Device: user}),
		refused("device", RemoveDevice{Device: "nonsense"}),
		refused("minimum", RequireClientVersion{Minimum: "soon"}),
	}
}

// TestControlsRefuseAlike runs every control of the table with bad input
// through a Local, a Remote and a raw POST to the control API: the same
// fault, naming the same field, from each, and the Remote refuses before
// anything crosses the wire. A control missing from the table, or from
// this test, fails it.
func TestControlsRefuseAlike(t *testing.T) {
	l, err := NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var posts atomic.Int64
	h := Handler(l.Network(), nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	r, err := Dial(t.Context(), srv.Listener.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	tested := map[string]bool{}
	for _, bad := range badInputs() {
		tested[bad.path] = true
		t.Run(strings.TrimPrefix(bad.path, "/v1/")+" "+bad.field, func(t *testing.T) {
			local := fault.From(bad.do(t.Context(), l))
			before := posts.Load()
			remote := fault.From(bad.do(t.Context(), r))
			if n := posts.Load() - before; n != 0 {
				t.Errorf("the Remote sent %d requests for bad input", n)
			}
			api := post(t, srv.URL+bad.path, bad.req)
			for side, f := range map[string]*fault.Error{"local": local, "remote": remote, "control API": api} {
				if f == nil || f.Code != fault.Invalid || f.Field != bad.field {
					t.Errorf("%s: %v, want %s naming %s", side, f, fault.Invalid, bad.field)
				}
			}
			if local != nil && remote != nil && api != nil && (local.Message != remote.Message || local.Message != api.Message) {
				t.Errorf("messages differ: local %q, remote %q, control API %q", local.Message, remote.Message, api.Message)
			}
		})
	}
	for _, c := range controls() {
		if !tested[c.path()] {
			t.Errorf("%s has no bad input in this test", c.path())
		}
		delete(tested, c.path())
	}
	for path := range tested {
		t.Errorf("%s is not in the table of controls", path)
	}
}

// post sends req to the control API as any client would, and reads the
// fault it answers.
func post(t *testing.T, url string, req any) *fault.Error {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var eb errorBody
	if err := json.NewDecoder(res.Body).Decode(&eb); err != nil {
		t.Fatalf("%s answered %s without an error body: %v", url, res.Status, err)
	}
	if res.StatusCode != fault.HTTPStatus(eb.Error.Code) {
		t.Errorf("%s answered %s for %s", url, res.Status, eb.Error.Code)
	}
	return &fault.Error{Code: eb.Error.Code, Field: eb.Error.Field, Message: eb.Error.Message}
}
