package whatsapp

import (
	"image/color"
	"testing"
)

// contactUpdate is a contacts.update's data with only the given keys set.
func contactUpdate(id, phone, lid string, set map[string]any) map[string]any {
	d := map[string]any{
		"id": id, "phone": phone, "lid": lid, "pushName": nil, "businessName": nil, "about": nil, "picture": nil, "timestamp": anyTime,
	}
	for k, v := range set {
		d[k] = v
	}
	return d
}

// TestContactEvents: what WhatsApp tells about a user becomes
// contacts.update (push name and business name with its messages, its
// about text, its picture), and what the phone saves in its address book
// contacts.upsert.
func TestContactEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	e.appStateSynced(m, "s1")
	jid := phoneJID(peer).String()

	from := len(e.pub.events("s1"))
	id, err := e.net.SendText(peer, phone, "hello")
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, id)
	peerAcct, _ := e.net.Account(peer)
	lid := peerAcct.LID.String()
	upd, from := e.next("s1", from, KindContactsUpdate)
	exactData(t, "contacts.update of a first message", upd.Data, contactUpdate(jid, peer, lid, map[string]any{"pushName": "Contact " + peer}))

	// A new push name and a business name, seen on the next message.
	if err := e.net.SetPushName(peer, "Erika"); err != nil {
		t.Fatal(err)
	}
	if err := e.net.SetBusinessName(peer, "Erika's Shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.net.SendText(peer, phone, "again"); err != nil {
		t.Fatal(err)
	}
	// whatsmeow reports the two on goroutines of their own: either first.
	got := map[string]map[string]any{}
	for range 2 {
		var ev published
		ev, from = e.next("s1", from, KindContactsUpdate)
		if ev.Data["pushName"] != nil {
			got["pushName"] = ev.Data
		} else {
			got["businessName"] = ev.Data
		}
	}
	exactData(t, "contacts.update of a new push name", got["pushName"], contactUpdate(jid, peer, lid, map[string]any{"pushName": "Erika"}))
	exactData(t, "contacts.update of a business name", got["businessName"], contactUpdate(jid, peer, lid, map[string]any{"businessName": "Erika's Shop"}))

	if err := e.net.SetAbout(peer, "Out fishing"); err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindContactsUpdate)
	exactData(t, "contacts.update of an about text", upd.Data, contactUpdate(jid, peer, lid, map[string]any{"about": "Out fishing"}))
	if err := e.net.SetAbout(peer, ""); err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindContactsUpdate)
	exactData(t, "contacts.update of a cleared about text", upd.Data, contactUpdate(jid, peer, lid, map[string]any{"about": ""}))

	pic, err := e.net.SetPicture(peer, testJPEG(t, color.RGBA{R: 200, A: 255}))
	if err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindContactsUpdate)
	exactData(t, "contacts.update of a picture", upd.Data, contactUpdate(jid, peer, lid, map[string]any{
		"picture": map[string]any{"id": pic, "removed": false, "author": jid},
	}))
	if _, err := e.net.SetPicture(peer, nil); err != nil {
		t.Fatal(err)
	}
	upd, from = e.next("s1", from, KindContactsUpdate)
	exactData(t, "contacts.update of a removed picture", upd.Data, contactUpdate(jid, peer, lid, map[string]any{
		"picture": map[string]any{"id": nil, "removed": true, "author": jid},
	}))

	// The phone saves the contact in its address book.
	if err := e.net.EditContact(phone, peer, "Erika Mustermann", "Erika"); err != nil {
		t.Fatal(err)
	}
	up, from := e.next("s1", from, KindContactsUpsert)
	exactData(t, "contacts.upsert", up.Data, map[string]any{
		"id": jid, "phone": peer, "lid": lid, "pushName": "Erika", "fullName": "Erika Mustermann", "firstName": "Erika",
		"businessName": "Erika's Shop",
	})
	// A contact the session never met: the address book gives its LID.
	if err := e.net.EditContact(phone, peer2, "Max Mustermann", "Max"); err != nil {
		t.Fatal(err)
	}
	acct2, _ := e.net.Account(peer2)
	up, _ = e.next("s1", from, KindContactsUpsert)
	exactData(t, "contacts.upsert of a stranger", up.Data, map[string]any{
		"id": phoneJID(peer2).String(), "phone": peer2, "lid": acct2.LID.String(),
		"pushName": nil, "fullName": "Max Mustermann", "firstName": "Max", "businessName": nil,
	})
	e.settle(st)
}
