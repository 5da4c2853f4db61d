package whatsapp

import (
	"testing"
)

// TestBlocklistEvents: the session publishes the whole block list at every
// login, before it reads CONNECTED; each user the phone blocks or unblocks
// is one blocklist.update; a list the phone replaces wholesale is read
// again and published whole.
func TestBlocklistEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	set, after := e.next("s1", 0, KindBlocklistSet)
	exactData(t, "blocklist.set at login", set.Data, map[string]any{"blocked": []any{}})
	if got := e.pub.statuses("s1", after); len(got) != 1 || got[0] != StatusConnected {
		t.Errorf("statuses after the login's blocklist.set %v, want the CONNECTED that follows it", got)
	}

	from := len(e.pub.events("s1"))
	if err := e.net.SetBlocked(phone, peer, true); err != nil {
		t.Fatal(err)
	}
	upd, from := e.next("s1", from, KindBlocklistUpdate)
	// The session never met the contact: WhatsApp named it by number only.
	exactData(t, "blocklist.update", upd.Data, map[string]any{
		"jid": phoneJID(peer).String(), "phone": peer, "lid": nil, "action": "block",
	})
	// Once the session knows the contact's LID, both are given.
	id, err := e.net.SendText(peer2, phone, "hi")
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, id)
	peer2Acct, _ := e.net.Account(peer2)
	if err := e.net.SetBlocked(phone, peer2, true); err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindBlocklistUpdate)
	exactData(t, "blocklist.update", upd.Data, map[string]any{
		"jid": phoneJID(peer2).String(), "phone": peer2, "lid": peer2Acct.LID.String(), "action": "block",
	})
	if err := e.net.SetBlocked(phone, peer, false); err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindBlocklistUpdate)
	exactData(t, "blocklist.update", upd.Data, map[string]any{
		"jid": phoneJID(peer).String(), "phone": peer, "lid": nil, "action": "unblock",
	})

	if err := e.net.SetBlocklist(phone, []string{peer, peer2}); err != nil {
		t.Fatal(err)
	}
	set, from = e.next("s1", from, KindBlocklistSet)
	exactData(t, "blocklist.set after a wholesale change", set.Data, map[string]any{"blocked": []any{
		map[string]any{"jid": phoneJID(peer).String(), "phone": peer, "lid": nil},
		map[string]any{"jid": phoneJID(peer2).String(), "phone": peer2, "lid": peer2Acct.LID.String()},
	}})

	// A new login publishes the list again.
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusConnected)
	set, _ = e.next("s1", from, KindBlocklistSet)
	if b, _ := set.Data["blocked"].([]any); len(b) != 2 {
		t.Errorf("blocklist.set after a reconnect: %v", set.Data)
	}
	e.settle(st)
}
