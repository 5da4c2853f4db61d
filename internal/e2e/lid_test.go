package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSendToLID: a send addressed by LID reaches the account that has the
// LID; a LID no account has is refused as WhatsApp refuses it (422 saying
// it is not on WhatsApp), and the simulated network makes no account of it.
func TestSendToLID(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550310002"
	net := s.Network(t)
	// The contact's account exists once the network was asked about it.
	if _, err := net.SendText(contact, apptest.LinkedPhone, "hallo"); err != nil {
		t.Fatal(err)
	}
	info, ok := net.Account(contact)
	if !ok {
		t.Fatalf("the network has no account %s", contact)
	}
	id := restSend(t, s, sess.ID, "text", map[string]any{"number": info.LID.String(), "text": "per LID"})
	if m := received(t, s, contact, id); str(m.Text) != "per LID" {
		t.Errorf("the contact got %q, want the text sent to its LID", str(m.Text))
	}

	const nobody = "299999999999999@lid"
	r := s.REST(t, "POST", "/session/"+sess.ID+"/message/text", apptest.AdminToken, `{"number":"`+nobody+`","text":"hi"}`)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Message(t), nobody) || !strings.Contains(r.Message(t), "not on WhatsApp") {
		t.Errorf("send to a LID no account has: %d %q, want 422 saying %s is not on WhatsApp", r.Status, r.Message(t), nobody)
	}
	if a, _ := net.Account("299999999999999"); !a.LID.IsEmpty() {
		t.Error("the network made an account of the unknown LID's digits")
	}
}
