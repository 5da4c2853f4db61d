package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// accountRows: contacts, the block list, groups, the account and its
// connection, calls, and the webhook test (events.md, Contacts and block
// list; Groups; Account and connection; Calls and presence; Webhook test).
func accountRows() []kindRow {
	return []kindRow{
		{kind: "contacts.upsert", run: func(t *testing.T, k *kindsEnv) {
			// App state: the phone saves a contact in its address book.
			const contact = "4915550030301"
			k.waitAppState(t)
			if err := k.n.EditContact(kindsPhone, contact, "Jana Beispiel", "Jana"); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("contacts.upsert", map[string]any{
				"id": userJID(contact), "phone": contact, "lid": k.lid(t, contact), "pushName": nil,
				"fullName": "Jana Beispiel", "firstName": "Jana", "businessName": nil,
			}, "id"))
		}},
		{kind: "contacts.update", run: func(t *testing.T, k *kindsEnv) {
			// A contact's name, seen on its first message; then its about
			// text.
			const from = "4915550030302"
			if _, err := k.n.SendText(from, kindsPhone, "Hallo"); err != nil {
				t.Fatal(err)
			}
			update := func(set map[string]any) map[string]any {
				return with(map[string]any{
					"id": userJID(from), "phone": from, "lid": k.lid(t, from), "pushName": nil, "businessName": nil,
					"about": nil, "picture": nil, "timestamp": recent,
				}, set)
			}
			k.stored(t, ev("contacts.update", update(map[string]any{"pushName": "Contact " + from}), "id", "pushName"))
			if err := k.n.SetAbout(from, "Im Urlaub bis Montag"); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("contacts.update", update(map[string]any{"about": "Im Urlaub bis Montag"}), "id", "about"))
		}},
		{kind: "blocklist.set", run: func(t *testing.T, k *kindsEnv) {
			// Read at the login, just before CONNECTED; again when the
			// phone replaces the list wholesale.
			const also = "4915550030303"
			k.fromLink()
			got := k.stored(t,
				ev("blocklist.set", map[string]any{"blocked": []any{blocked(kindsBlocked, nil)}}),
				ev("connection.update", connection("CONNECTED", nil), "status"),
			)
			k.onlyBetween(t, got[0], got[1], "GROUPS_UPSERT") // the first login lists the groups

			k.mark(t)
			if err := k.n.SetBlocklist(kindsPhone, []string{kindsBlocked, also}); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("blocklist.set", map[string]any{"blocked": []any{blocked(kindsBlocked, nil), blocked(also, nil)}}))
		}},
		{kind: "blocklist.update", run: func(t *testing.T, k *kindsEnv) {
			const contact = "4915550030304"
			for _, action := range []string{"block", "unblock"} {
				if err := k.n.SetBlocked(kindsPhone, contact, action == "block"); err != nil {
					t.Fatal(err)
				}
				k.stored(t, ev("blocklist.update", with(blocked(contact, nil), map[string]any{"action": action}), "jid", "action"))
			}
		}},
		{kind: "groups.upsert", run: func(t *testing.T, k *kindsEnv) {
			// Listed after the first login, before CONNECTED; then a group
			// someone creates with the account in it, with its chat.
			k.fromLink()
			got := k.stored(t,
				ev("groups.upsert", k.group(t, k.listed.String(), "Vorher", kindsGroupHost, "listed", nil, kindsPhone), "id"),
				ev("connection.update", connection("CONNECTED", nil), "status"),
			)
			k.onlyBetween(t, got[0], got[1], "GROUPS_UPSERT")
			k.mark(t)
			const host, member = "4915550030305", "4915550030306"
			g, err := k.n.CreateGroup(host, "Lauftreff", kindsPhone, member)
			if err != nil {
				t.Fatal(err)
			}
			got = k.stored(t,
				ev("groups.upsert", k.group(t, g.String(), "Lauftreff", host, "created", userJID(host), kindsPhone, member), "id"),
				ev("chats.upsert", map[string]any{
					"id": g.String(), "name": "Lauftreff", "lid": nil, "unreadCount": nil, "archived": false, "pinned": false,
					"muteUntil": nil, "readOnly": nil, "ephemeralSeconds": nil, "lastMessageAt": nil,
				}, "id"),
			)
			k.adjacent(t, got)
		}},
		{kind: "groups.update", run: func(t *testing.T, k *kindsEnv) {
			const admin = "4915550030307"
			g, err := k.n.CreateGroup(admin, "Alter Name", kindsPhone)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.n.SetGroupSubject(admin, g, "Neuer Name"); err != nil {
				t.Fatal(err)
			}
			if err := k.n.SetGroupAnnounce(admin, g, true); err != nil {
				t.Fatal(err)
			}
			update := func(set map[string]any) map[string]any {
				return with(map[string]any{
					"id": g.String(), "author": userJID(admin), "authorPhone": admin, "subject": nil, "topic": nil,
					"announce": nil, "locked": nil, "ephemeralSeconds": nil, "inviteLink": nil, "approvalRequired": nil, "memberAddMode": nil,
					"deleted": nil, "deleteReason": nil, "picture": nil, "timestamp": recent,
				}, set)
			}
			k.stored(t,
				ev("groups.update", update(map[string]any{"subject": "Neuer Name"}), "id"),
				ev("groups.update", update(map[string]any{"announce": true}), "id"),
			)
		}},
		{kind: "group-participants.update", run: func(t *testing.T, k *kindsEnv) {
			const admin, joiner = "4915550030308", "4915550030309"
			g, err := k.n.CreateGroup(admin, "Team", kindsPhone)
			if err != nil {
				t.Fatal(err)
			}
			for _, action := range []string{"add", "promote"} {
				if err := k.n.UpdateGroupParticipants(admin, g, action, joiner); err != nil {
					t.Fatal(err)
				}
				k.stored(t, ev("group-participants.update", map[string]any{
					"id": g.String(), "action": action, "participants": []any{blocked(joiner, k.lid(t, joiner))},
					"author": userJID(admin), "authorPhone": admin, "reason": nil, "timestamp": recent,
				}, "id", "action"))
			}
		}},
		{kind: "group.join-request", run: func(t *testing.T, k *kindsEnv) {
			// Someone asks to join a group the account administers, where
			// admins approve who joins.
			const member, requester = "4915550030310", "4915550030311"
			g, err := k.n.CreateGroup(kindsPhone, "Club", member)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.n.SetGroupApproval(kindsPhone, g, true); err != nil {
				t.Fatal(err)
			}
			info, _ := k.n.Group(g)
			if _, err := k.n.RequestJoinGroup(requester, info.InviteCode); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("group.join-request", map[string]any{
				"id": g.String(), "action": "created", "participant": userJID(requester), "participantPhone": requester,
				"participantLid": k.lid(t, requester), "author": userJID(requester), "method": "invite_link", "timestamp": recent,
			}, "id"))
		}},
		{kind: "connection.update", run: func(t *testing.T, k *kindsEnv) {
			// The linking: connect, a QR code, the login with the replay
			// of what WhatsApp kept (the phone's app state key); then a
			// connection WhatsApp drops, which comes back by itself.
			k.fromLink()
			k.stored(t,
				ev("connection.update", connection("CONNECTING", nil), "status"),
				ev("connection.update", with(connection("PAIRING", nil), map[string]any{"qr": nonEmpty}), "status"),
				ev("connection.update", connection("CONNECTING", nil), "status"),
				ev("connection.update", connection("CONNECTING", map[string]any{"completed": false, "count": 1, "messages": 1}), "status"),
				ev("connection.update", connection("CONNECTING", map[string]any{"completed": true, "count": 1, "messages": nil}), "status"),
				ev("connection.update", connection("CONNECTED", nil), "status"),
			)
			k.mark(t)
			k.s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sandboxDropConnection(sessionId: $s) }`, map[string]any{"s": k.sess.ID}, nil)
			k.stored(t,
				ev("connection.update", with(connection("CONNECTING", nil), map[string]any{"reason": "the connection was lost: reconnecting"}), "status"),
				ev("connection.update", connection("CONNECTED", nil), "status"),
			)
		}},
		{kind: "creds.update", run: func(t *testing.T, k *kindsEnv) {
			// The linking: the device's identity; then a profile name
			// set through the API.
			k.fromLink()
			lid := strings.TrimSuffix(k.lid(t, kindsPhone), "@lid")
			k.stored(t, ev("creds.update", map[string]any{
				"jid": k.sess.JID, "lid": fmt.Sprintf("%s:%d@lid", lid, k.dev.Device), "phone": kindsPhone,
				"platform": "wafake", "businessName": nil, "pushName": nil,
			}))
			k.mark(t)
			k.s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateProfileName(sessionId: $s, name: "Blumen Kaya") }`, map[string]any{"s": k.sess.ID}, nil)
			k.stored(t, ev("creds.update", map[string]any{
				"jid": nil, "lid": nil, "phone": nil, "platform": nil, "businessName": nil, "pushName": "Blumen Kaya",
			}))
		}},
		{kind: "call", run: func(t *testing.T, k *kindsEnv) {
			// A video call offered, then ended by the caller.
			const caller = "4915550030312"
			id, err := k.n.Call(caller, userOf(t, kindsPhone), wafake.CallStanza{Stage: "offer", Video: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.n.Call(caller, userOf(t, kindsPhone), wafake.CallStanza{Stage: "terminate", CallID: id, Reason: "timeout"}); err != nil {
				t.Fatal(err)
			}
			call := func(set map[string]any) map[string]any {
				return with(map[string]any{
					"callId": id, "from": userJID(caller), "fromPhone": caller, "fromLid": k.lid(t, caller),
					"isGroup": false, "groupJid": nil, "reason": nil, "timestamp": recent,
				}, set)
			}
			k.stored(t,
				ev("call", call(map[string]any{"status": "offer", "isVideo": true}), "callId", "status"),
				ev("call", call(map[string]any{"status": "terminate", "isVideo": nil, "reason": "timeout"}), "callId", "status"),
			)
		}},
		{kind: "webhook.test", run: func(t *testing.T, k *kindsEnv) {
			// Derived: testWebhook. Delivered to the webhook even when it
			// is disabled, as the envelope that was stored.
			rc := apptest.NewReceiver(t)
			var created struct {
				CreateWebhook struct{ Webhook struct{ ID string } }
			}
			k.s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u, enabled: false}) { webhook { id } } }`,
				map[string]any{"s": k.sess.ID, "u": rc.URL}, &created)
			hook := created.CreateWebhook.Webhook.ID
			k.s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`,
				map[string]any{"s": k.sess.ID, "w": hook}, nil)
			got := k.stored(t, ev("webhook.test", map[string]any{
				"webhookId": hook, "message": "This is a test event from wagraph: answer 2xx to acknowledge it.",
			}, "webhookId"))
			var body struct {
				ID    string
				Seq   int64
				Event string
				Data  json.RawMessage
			}
			if err := json.Unmarshal(rc.Next(t).Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.ID != got[0].ID || body.Seq != got[0].Seq || body.Event != "webhook.test" || !sameJSON(body.Data, got[0].Data) {
				t.Errorf("delivered %+v, stored %+v", body, got[0])
			}
		}},
	}
}

// mark makes the rest of the row look for its events after the log's end
// now.
func (k *kindsEnv) mark(t *testing.T) {
	t.Helper()
	k.sync(t)
	k.rowFrom = k.checkedID
}

// onlyBetween checks that the log holds nothing but events of kinds
// (GraphQL names) between a and b.
func (k *kindsEnv) onlyBetween(t *testing.T, a, b gqlEvent, kinds ...string) {
	t.Helper()
	for seq := a.Seq + 1; seq < b.Seq; seq++ {
		if e := k.log[seq]; !slices.Contains(kinds, e.Kind) {
			t.Errorf("seq %d between %s (seq %d) and %s (seq %d) is %s %s", seq, a.Kind, a.Seq, b.Kind, b.Seq, e.Kind, e.Data)
		}
	}
}

// blocked is a user as blocklist events and group participant lists name
// them: by phone JID, with the number and the LID when known.
func blocked(phone string, lid any) map[string]any {
	return map[string]any{"jid": userJID(phone), "phone": phone, "lid": lid}
}

// connection is a connection.update's data.
func connection(status string, offlineSync any) map[string]any {
	return map[string]any{"status": status, "qr": nil, "reason": nil, "offlineSync": offlineSync, "limits": nil}
}

// group is a groups.upsert's data of a group owner created with members
// (all plain members), the account in it for reason, put there by author.
func (k *kindsEnv) group(t *testing.T, id, subject, owner, reason string, author any, members ...string) map[string]any {
	t.Helper()
	participants := []any{with(blocked(owner, k.lid(t, owner)), map[string]any{"role": "superadmin"})}
	for _, m := range members {
		participants = append(participants, with(blocked(m, k.lid(t, m)), map[string]any{"role": "member"}))
	}
	return map[string]any{
		"id": id, "subject": subject, "topic": nil, "owner": userJID(owner), "created": recent,
		"announce": false, "locked": false, "approvalRequired": false, "ephemeralSeconds": 0,
		"participants": participants, "reason": reason, "author": author,
	}
}
