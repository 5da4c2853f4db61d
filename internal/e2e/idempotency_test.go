package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/messaging"
)

// TestIdempotentSends: a send retried with the same Idempotency-Key (REST)
// or idempotencyKey (GraphQL) answers the first result and the phone gets
// one message; the key with another body is 409 naming it; header and
// body disagreeing is 400. Peers' users report duplicates when their HTTP
// client retries a send (OpenWA #464, waha #2031).
func TestIdempotentSends(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550270002"
	path := "/api/v1/session/" + sess.ID + "/message/text"
	body := `{"number":"` + contact + `","text":"Ihre Bestellung 4711 ist unterwegs"}`
	post := func(key, body string) apptest.Response {
		return s.Do(t, "POST", path, apptest.AdminToken, body, map[string]string{"Idempotency-Key": key})
	}
	first := post("order-4711", body)
	second := post("order-4711", body)
	if first.Status != http.StatusOK || second.Status != http.StatusOK || string(first.Body) != string(second.Body) {
		t.Fatalf("two sends with one key: %d %s / %d %s, want the same success twice", first.Status, first.Body, second.Status, second.Body)
	}
	var env struct {
		Data struct {
			MessageID string
			Recipient struct{ Input, JID, Phone, LID string }
		}
	}
	first.JSON(t, &env)
	// Who WhatsApp addressed, by phone and LID.
	info, _ := s.Network(t).Account(contact)
	if r := env.Data.Recipient; r.Input != contact || r.Phone != contact || r.JID != contact+"@s.whatsapp.net" || r.LID != info.LID.String() {
		t.Errorf("recipient %+v, want %s by phone and LID %s", r, contact, info.LID)
	}
	received(t, s, contact, env.Data.MessageID)
	n := 0
	for _, m := range inbox(t, s, contact) {
		if str(m.Text) == "Ihre Bestellung 4711 ist unterwegs" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the phone got the text %d times, want once", n)
	}

	if r := post("order-4711", `{"number":"`+contact+`","text":"etwas anderes"}`); r.Status != http.StatusConflict || !strings.Contains(r.Message(t), "idempotencyKey") {
		t.Errorf("the key with another body: %d %q, want 409 naming idempotencyKey", r.Status, r.Message(t))
	}
	if r := post("a", `{"number":"`+contact+`","text":"x","idempotencyKey":"b"}`); r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), "differ") {
		t.Errorf("header and body disagreeing: %d %q", r.Status, r.Message(t))
	}

	// GraphQL: the same key in the input.
	q := `mutation($s: ID!, $in: SendTextInput!) { sendText(sessionId: $s, input: $in) { messageId } }`
	in := map[string]any{"number": contact, "text": "per GraphQL", "idempotencyKey": "gql-1"}
	var a, b struct{ SendText struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "in": in}, &a)
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "in": in}, &b)
	if a.SendText.MessageID == "" || a.SendText.MessageID != b.SendText.MessageID {
		t.Errorf("GraphQL retry: %s then %s, want one message", a.SendText.MessageID, b.SendText.MessageID)
	}
}

// TestIdempotentSendsBesideTheKinds: every operation that sends a message
// honours the Idempotency-Key header, not only the kinds of send
// (messaging.KeyedSends lists them; the kinds go through one Send, which
// TestIdempotentSends tries): the same key twice answers the first
// message and the phone gets one. An operation of the list without a case
// here fails the test.
func TestIdempotentSendsBesideTheKinds(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550270102"
	net := s.Network(t)
	base := "/api/v1/session/" + sess.ID
	type call struct{ method, path, body, other string } // other: another body
	cases := map[string]func(t *testing.T) call{
		"sendReaction": func(t *testing.T) call {
			id, err := net.SendText(contact, apptest.LinkedPhone, "Gefällt dir das?")
			if err != nil {
				t.Fatal(err)
			}
			waitStored(t, s, sess.ID, id)
			return call{"POST", base + "/message/" + id + "/reaction", `{"emoji":"👍"}`, `{"emoji":"🎉"}`}
		},
		"editMessage": func(t *testing.T) call {
			id := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "Treffen um 9"})
			waitStored(t, s, sess.ID, id)
			return call{"PUT", base + "/message/" + id, `{"text":"Treffen um 10"}`, `{"text":"Treffen um 11"}`}
		},
		"sendGroupInvite": func(t *testing.T) call {
			var g struct{ CreateGroup struct{ ID string } }
			s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Stammtisch"}) { id } }`, map[string]any{"s": sess.ID}, &g)
			return call{"POST", base + "/group/" + g.CreateGroup.ID + "/send-invite", `{"number":"` + contact + `","message":"Komm dazu"}`,
				`{"number":"` + contact + `","message":"Komm doch"}`}
		},
	}
	kinds := map[string]bool{}
	for _, k := range messaging.KindTable() {
		kinds[k.Mutation] = true
	}
	for _, op := range messaging.KeyedSends() {
		if kinds[op.Mutation] {
			continue
		}
		t.Run(op.Mutation, func(t *testing.T) {
			setup, ok := cases[op.Mutation]
			if !ok {
				t.Fatalf("%s sends a message: it needs a case here showing it honours the Idempotency-Key", op.Mutation)
			}
			c := setup(t)
			before := len(net.Inbox(contact))
			key := map[string]string{"Idempotency-Key": "retry-" + op.Mutation}
			first := s.Do(t, c.method, c.path, apptest.AdminToken, c.body, key)
			second := s.Do(t, c.method, c.path, apptest.AdminToken, c.body, key)
			if first.Status != http.StatusOK || second.Status != http.StatusOK || string(first.Body) != string(second.Body) {
				t.Fatalf("the same key twice: %d %s / %d %s, want the same success twice", first.Status, first.Body, second.Status, second.Body)
			}
			if n := len(net.Inbox(contact)) - before; n != 1 {
				t.Errorf("the phone got %d messages, want 1", n)
			}
			if r := s.Do(t, c.method, c.path, apptest.AdminToken, c.other, key); r.Status != http.StatusConflict || !strings.Contains(r.Message(t), "idempotencyKey") {
				t.Errorf("the key with another body: %d %q, want 409 naming idempotencyKey", r.Status, r.Message(t))
			}
		})
	}
}
