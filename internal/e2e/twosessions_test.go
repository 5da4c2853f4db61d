package e2e

import (
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestSessionsOfOneGatewayTalk (issue 24): a message a session sends to the
// account of another session of the same gateway reaches that session,
// not only that account's phone: the network delivers every message to
// every device of the recipient, linked devices included, as WhatsApp
// does. Both ways, each as the other's inbound-message.upsert, decrypted.
// On main before this the network relayed nothing to linked devices: the
// phone's inbox had the text, the other session never heard of it.
func TestSessionsOfOneGatewayTalk(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	const phoneA, phoneB = "4915550240001", "4915550240002"
	a := s.LinkSession(t, phoneA)
	b := s.LinkSession(t, phoneB)

	toB := restSend(t, s, a.ID, "text", map[string]any{"number": phoneB, "text": "Hallo B, hier ist A"})
	got := inboundText(t, s, b.ID, toB)
	if got.Text != "Hallo B, hier ist A" || got.SenderPhone != phoneA || got.FromMe {
		t.Errorf("B got %+v, want A's text from %s", got, phoneA)
	}
	if inbox := received(t, s, phoneB, toB); str(inbox.Text) != "Hallo B, hier ist A" {
		t.Errorf("B's phone decrypted %q", str(inbox.Text))
	}

	toA := restSend(t, s, b.ID, "text", map[string]any{"number": phoneA, "text": "Hallo A, B antwortet"})
	if got := inboundText(t, s, a.ID, toA); got.Text != "Hallo A, B antwortet" || got.SenderPhone != phoneB {
		t.Errorf("A got %+v, want B's answer from %s", got, phoneB)
	}
}

// inboundMessage is the data of an inbound-message.upsert, in part.
type inboundMessage struct {
	ID, Text, SenderPhone string
	FromMe                bool
}

// inboundText waits for session sessionID's inbound-message.upsert of
// message id.
func inboundText(t *testing.T, s *apptest.Server, sessionID, id string) inboundMessage {
	t.Helper()
	var found inboundMessage
	testclient.Until(t, 15*time.Second, "the session's inbound-message.upsert of "+id, func() bool {
		for _, d := range eventData(t, s, sessionID, "INBOUND_MESSAGE_UPSERT") {
			if d["id"] == id {
				found.ID, found.FromMe = id, d["fromMe"] == true
				found.Text, _ = d["text"].(string)
				found.SenderPhone, _ = d["senderPhone"].(string)
				return true
			}
		}
		return false
	})
	return found
}
