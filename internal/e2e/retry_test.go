package e2e

import (
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestRetryAfterRestartBetweenSessions (issue 32): a message one session
// of the gateway sent another before the server restarted reaches that
// session decrypted although its first copy could not be: the recipient's
// device asks for it again after the restart, the network hands the retry
// receipt to the sender's device, and the sender — a new process, nothing
// in memory — answers from whatsmeow's retry store (UseRetryMessageStore).
// Without the store the message stays lost.
func TestRetryAfterRestartBetweenSessions(t *testing.T) {
	t.Parallel()
	const phoneB, text = "4915550320002", "sent before the restart, asked for after it"
	s, a := apptest.StartLinked(t)
	b := s.LinkSession(t, phoneB)
	bDev, err := whatsapp.ParseJID(b.JID)
	if err != nil {
		t.Fatal(err)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { status } }`, map[string]any{"id": b.ID}, nil)
	s.WaitStatus(t, b.ID, "DISCONNECTED", nil)
	s.Network(t).CorruptNextCopies(bDev, 1)
	id := restSend(t, s, a.ID, "text", map[string]any{"number": phoneB, "text": text})
	cfg := s.Config
	s.Stop(t)

	second := apptest.Start(t, cfg)
	second.WaitStatus(t, a.ID, "CONNECTED", nil)
	second.Track(a)
	second.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": b.ID}, nil)
	second.WaitStatus(t, b.ID, "CONNECTED", nil)
	second.Track(b)
	if got := inboundText(t, second, b.ID, id); got.Text != text || got.SenderPhone != apptest.LinkedPhone {
		t.Errorf("B got %+v, want the text %q from %s", got, text, apptest.LinkedPhone)
	}
}
