package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
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
