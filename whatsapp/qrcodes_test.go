package whatsapp

import (
	"testing"
	"time"
)

// TestLinkedOutlivesItsQRCodes: a session linked by its QR code stays
// CONNECTED after the codes it showed would have run out. Before, the
// rotation went on after the pairing and ended the linked session as
// "pairing timed out" once its six codes were used up (160 s after the
// first with whatsmeow's timing: goal 3's load runs lost every text after
// that).
func TestLinkedOutlivesItsQRCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	// Six codes run out in 3.5 s; the first lives long enough to be
	// scanned on a loaded machine.
	m.qrTimeouts = QRTimeouts{First: 3 * time.Second, Next: 100 * time.Millisecond}
	st := e.pairQR(m, "s1", "491701234567")
	time.Sleep(4 * time.Second)
	if now := m.State("s1"); now.Status != StatusConnected || now.JID != st.JID {
		t.Fatalf("4 s after the link (its QR codes ran out after 3.5 s): %+v, want CONNECTED as %s", now, st.JID)
	}
	if got := e.pub.statuses("s1", 0); got[len(got)-1] != StatusConnected {
		t.Errorf("statuses published %v, want the last CONNECTED", got)
	}
}
