package whatsapp

import (
	"errors"
	"sync"
	"testing"
)

// TestReleaseThenAdopt is a session moving between two processes of a
// cluster, with the real client on both sides: the first manager releases
// it (its connection closes, nothing is saved or published, its watcher
// ends with ErrMoved), the second adopts it and logs the same device in;
// the network never sees the device connected twice. An adoption whose
// lease was lost meanwhile (still false) starts nothing.
func TestReleaseThenAdopt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first, second := e.manager(), e.manager()
	st := e.pairQR(first, "s1", phone)
	dev := st.JID

	watched, watching := make(chan error, 1), make(chan struct{})
	go func() {
		var once sync.Once
		watched <- first.Watch(ctx, "s1", func(SessionState) bool { once.Do(func() { close(watching) }); return true })
	}()
	<-watching
	saved, published := e.statuses.get("s1"), len(e.pub.events("s1"))
	first.Release("s1")
	if err := <-watched; !errors.Is(err, ErrMoved) {
		t.Errorf("the watcher of the released session ended with %v, want ErrMoved", err)
	}
	if got := e.statuses.get("s1"); !got.equal(saved) {
		t.Errorf("Release saved %+v over %+v: the new holder's status would be overwritten", got, saved)
	}
	if n := len(e.pub.events("s1")); n != published {
		t.Errorf("Release published %d events: %+v", n-published, e.pub.events("s1")[published:])
	}
	e.waitUntil("the network saw the released connection closed", func() bool {
		return e.net.ConnectionCounts()[dev].Open == 0
	})

	if err := second.Adopt(ctx, "s1", func() bool { return false }); err != nil {
		t.Fatalf("Adopt of a lease lost again: %v", err)
	}
	if s := second.State("s1"); s.Status != StatusDisconnected {
		t.Errorf("an adoption whose lease was lost started the session: %+v", s)
	}
	if err := second.Adopt(ctx, "s1", func() bool { return true }); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	got := e.waitStatus(second, "s1", StatusConnected)
	e.settle(got)
	if got.JID != dev {
		t.Errorf("the adopted session logged in as %s, want the same device %s", got.JID, dev)
	}
	c := e.net.ConnectionCounts()[dev]
	if c.MaxOpen != 1 || c.Replaced != 0 || c.Logins != 2 {
		t.Errorf("the network counted %+v for the device; want at most 1 open at once, 2 logins, none replaced", c)
	}
	if s := first.State("s1"); s.Status != StatusDisconnected {
		t.Errorf("the releasing manager still shows %+v", s)
	}
}

// TestAdoptKeepsWhatRunsUnderTheLease: in a cluster, the tick that took a
// new session's lease adopts it in the background, while the request that
// created it goes on to connect it here. The adoption must not throw the
// pairing away (it did: the QR code never came, and the session read
// DISCONNECTED). A copy that runs nothing is still read anew: another
// process may have linked the session since it was loaded.
func TestAdoptKeepsWhatRunsUnderTheLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.statuses.add("new")
	if err := m.Connect(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	pairing := e.waitState(m, "new", "QR code", func(st SessionState) bool { return st.Status == StatusPairing && st.QRCode != "" })
	if err := m.Adopt(ctx, "new", func() bool { return true }); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	if st := m.State("new"); st.Status != StatusPairing || st.QRCode == "" {
		t.Fatalf("after the adoption the pairing session reads %s (%s), want PAIRING with its QR code", st.Status, st.Reason)
	}
	if err := e.net.ScanQR(m.State("new").QRCode, phone); err != nil {
		t.Fatalf("scan after the adoption: %v (the QR code first shown was %t)", err, pairing.QRCode != "")
	}
	e.settle(e.waitStatus(m, "new", StatusConnected))

	// A copy loaded while another process held the session, linked there
	// since: the adoption logs the device in.
	other := e.manager()
	e.statuses.add("elsewhere")
	if err := other.Watch(ctx, "elsewhere", func(SessionState) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if st := other.State("elsewhere"); st.JID != "" {
		t.Fatalf("a session never linked reads %+v", st)
	}
	linked := e.pairQR(m, "elsewhere", "4915550000777")
	m.Release("elsewhere")
	if err := other.Adopt(ctx, "elsewhere", func() bool { return true }); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	if got := e.waitStatus(other, "elsewhere", StatusConnected); got.JID != linked.JID {
		t.Errorf("the adopted session logged in as %s, want %s", got.JID, linked.JID)
	}
}
