package app_test

import (
	"encoding/json"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestSessionListAcrossProcesses: the sessions query on one process of a
// cluster answers for the sessions another process runs from the records
// read with the list (the status, device, push name and connection time
// their holder saved): no call is forwarded to the holder, whatever the
// number of sessions, and the answer is the holder's own. On main before
// this change each session of the list was a status call to its holder.
func TestSessionListAcrossProcesses(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	a, b, network, calls := routedProcesses(t)

	linked := b.LinkSession(t, "4915550240001")
	defer apptest.Settle(t, network, linked)
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	b.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "unlinked") { session { id } } }`, nil, &created)
	unlinked := created.CreateSession.Session.ID
	for _, id := range []string{linked.ID, unlinked} {
		var owner struct{ Session struct{ Owner string } }
		b.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { owner } }`, map[string]any{"id": id}, &owner)
		if owner.Session.Owner != b.Config.NodeID {
			t.Fatalf("session %s is run by %q, want the process that created it (%s)", id, owner.Session.Owner, b.Config.NodeID)
		}
	}

	const list = `{ sessions { id name status statusReason jid phone pushName qrCode pairingCode createdAt connectedAt } }`
	var onB, onA struct{ Sessions []map[string]any }
	b.MustGraphQL(t, apptest.AdminToken, list, nil, &onB)
	made := func() []string {
		calls.mu.Lock()
		defer calls.mu.Unlock()
		return append([]string(nil), calls.calls...)
	}
	before := len(made())
	a.MustGraphQL(t, apptest.AdminToken, list, nil, &onA)
	if after := made()[before:]; len(after) != 0 {
		t.Errorf("listing the sessions on the other process forwarded %d calls to their holder: %q; want none", len(after), after)
	}
	want, _ := json.Marshal(onB.Sessions)
	got, _ := json.Marshal(onA.Sessions)
	if string(got) != string(want) {
		t.Errorf("the list on the other process:\n%s\nwant the holder's own:\n%s", got, want)
	}
	if len(onA.Sessions) != 2 || onA.Sessions[0]["status"] != "CONNECTED" || onA.Sessions[0]["jid"] != linked.JID || onA.Sessions[1]["status"] != "DISCONNECTED" {
		t.Errorf("listed %s, want %s CONNECTED as %s, then %s DISCONNECTED", got, linked.ID, linked.JID, unlinked)
	}
}
