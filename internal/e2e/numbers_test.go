package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestNumbersReachOneAccount (issue 20's must-show 4): a number written as
// people write it — "0049 …", "+49 …", "(49) …", "49.…" — reaches the
// one account it names, through REST and GraphQL alike; a national number
// ("0155…") is 400 naming number and reaches nobody; and "004915550007002",
// once sent to an account of that name, now reaches 4915550007002.
func TestNumbersReachOneAccount(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const to = "4915550007002"
	written := []string{"0049 1555 0007002", "+49 1555 0007002", "(49) 1555-0007002", "49.1555.0007002", "004915550007002", "+49 (1555) 000-70-02"}

	for _, number := range written {
		t.Run("REST/"+number, func(t *testing.T) {
			id := restSend(t, s, sess.ID, "text", map[string]any{"number": number, "text": "via REST to " + number})
			if m := received(t, s, to, id); str(m.Text) != "via REST to "+number {
				t.Errorf("%s received %q", to, str(m.Text))
			}
		})
		t.Run("GraphQL/"+number, func(t *testing.T) {
			var out struct{ SendText struct{ MessageID string } }
			s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $n: String!, $t: String!) { sendText(sessionId: $s, input: {number: $n, text: $t}) { messageId } }`,
				map[string]any{"s": sess.ID, "n": number, "t": "via GraphQL to " + number}, &out)
			if m := received(t, s, to, out.SendText.MessageID); str(m.Text) != "via GraphQL to "+number {
				t.Errorf("%s received %q", to, str(m.Text))
			}
		})
	}

	t.Run("a national number is refused", func(t *testing.T) {
		res := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"015550007002","text":"lost"}`)
		const want = `number: use the international format: country code then number, e.g. 491551234567 (got "015550007002")`
		if res.Status != http.StatusBadRequest || res.Message(t) != want {
			t.Errorf("REST: %d %s, want 400 %q", res.Status, res.Body, want)
		}
		gql := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sendText(sessionId: $s, input: {number: "0155 5000 7002", text: "lost"}) { messageId } }`, map[string]any{"s": sess.ID})
		if len(gql.Errors) != 1 || gql.Errors[0].Code() != "BAD_USER_INPUT" || gql.Errors[0].Extensions["field"] != "input.number" ||
			!strings.HasPrefix(gql.Errors[0].Message, "number: use the international format") {
			t.Errorf("GraphQL: %+v", gql.Errors)
		}
	})

	// Nothing reached the accounts the old reading addressed.
	for _, wrong := range []string{"004915550007002", "015550007002"} {
		var out struct{ SandboxInbox []inboxMessage }
		s.MustGraphQL(t, apptest.AdminToken, inboxQuery, map[string]any{"phone": wrong}, &out)
		if len(out.SandboxInbox) != 0 {
			b, _ := json.Marshal(out.SandboxInbox)
			t.Errorf("%s received %s", wrong, b)
		}
	}
}

// TestNumberFieldsAsWritten: the other number fields take the same
// writing: a contact card's phoneNumber, a group's participants and the
// pairing phone.
func TestNumberFieldsAsWritten(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	const owner, a, b = "4915550007101", "4915550007102", "4915550007103"
	sess := s.LinkSession(t, owner)

	t.Run("contact card", func(t *testing.T) {
		id := restSend(t, s, sess.ID, "contact", map[string]any{"number": "+49 1555 0007102",
			"contact": map[string]any{"phoneNumber": "0049 (1555) 000-7103", "firstName": "Bea"}})
		if v := str(received(t, s, a, id).Vcard); !strings.Contains(v, "waid=4915550007103:+4915550007103") {
			t.Errorf("vCard %q does not carry 4915550007103", v)
		}
	})
	t.Run("group participants", func(t *testing.T) {
		res := s.REST(t, "POST", "/session/"+sess.ID+"/group", apptest.AdminToken, `{"subject":"Written","participants":["+49 1555 0007102","(49) 1555-0007103"]}`)
		if res.Status != http.StatusOK {
			t.Fatalf("create group: %d %s", res.Status, res.Body)
		}
		var created struct{ Data struct{ ID string } }
		res.JSON(t, &created)
		r := roles(groupView(t, s, created.Data.ID))
		if r[owner] != "superadmin" || r[a] != "member" || r[b] != "member" || len(r) != 3 {
			t.Errorf("the group holds %v", r)
		}
	})
	t.Run("pairing phone", func(t *testing.T) {
		const phone = "4915550007109"
		id := restCreateSession(t, s)
		res := s.REST(t, "POST", "/session/"+id+"/pair-phone", apptest.AdminToken, `{"number":"+49 1555 000-7109"}`)
		if res.Status != http.StatusOK {
			t.Fatalf("pair-phone: %d %s", res.Status, res.Body)
		}
		var env struct{ Data struct{ Code string } }
		res.JSON(t, &env)
		var out struct{ SandboxEnterPairingCode struct{ Status, Jid string } }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $p: String!, $c: String!) { sandboxEnterPairingCode(sessionId: $id, phone: $p, code: $c) { status jid } }`,
			map[string]any{"id": id, "p": phone, "c": env.Data.Code}, &out)
		if out.SandboxEnterPairingCode.Status != "CONNECTED" || !strings.HasPrefix(out.SandboxEnterPairingCode.Jid, phone+":") {
			t.Fatalf("after entering the code: %+v", out)
		}
		s.Track(apptest.Session{ID: id, Phone: phone, JID: out.SandboxEnterPairingCode.Jid})
	})
}

// TestQuotedEmpty: quoted "" — what genqlient and other generators send
// for an optional string left unset — is a send without a quote, through
// REST and GraphQL.
func TestQuotedEmpty(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const to = "4915550007202"

	id := restSend(t, s, sess.ID, "text", map[string]any{"number": to, "text": "no quote", "quoted": ""})
	if m := received(t, s, to, id); m.QuotedID != nil {
		t.Errorf("REST: quoted %q", *m.QuotedID)
	}
	var out struct{ SendText struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $q: ID) { sendText(sessionId: $s, input: {number: "4915550007202", text: "no quote either", quoted: $q}) { messageId } }`,
		map[string]any{"s": sess.ID, "q": ""}, &out)
	if m := received(t, s, to, out.SendText.MessageID); m.QuotedID != nil {
		t.Errorf("GraphQL: quoted %q", *m.QuotedID)
	}
	// A quote given is still a quote.
	quoting := restSend(t, s, sess.ID, "text", map[string]any{"number": to, "text": "quoting", "quoted": id})
	if m := received(t, s, to, quoting); str(m.QuotedID) != id {
		t.Errorf("quoted %q, want %s", str(m.QuotedID), id)
	}
}
