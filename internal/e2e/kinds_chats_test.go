package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// chatRows: chats, presence, labels and history (events.md, Chats; Calls
// and presence; Labels; History).
func chatRows() []kindRow {
	return []kindRow{
		{kind: "chats.upsert", run: func(t *testing.T, k *kindsEnv) {
			// Derived: the first message of a chat the service had never
			// seen, received or sent, just before the message's event.
			const from, to = "4915550030201", "4915550030202"
			id, err := k.n.SendText(from, kindsPhone, "Hallo, neu hier")
			if err != nil {
				t.Fatal(err)
			}
			got := k.stored(t,
				ev("chats.upsert", newChat(userJID(from), "Contact "+from, recent), "id"),
				ev("inbound-message.upsert", messageData(map[string]any{
					"id": id, "chat": userJID(from), "sender": userJID(from), "senderPhone": from, "senderLid": k.lid(t, from),
					"pushName": "Contact " + from, "type": "text", "text": "Hallo, neu hier",
				}), "id"),
			)
			k.adjacent(t, got)
			k.sameTime(t, got[0], "lastMessageAt", got[1], "timestamp")

			sent, ts := k.sendText(t, to, "Erste Nachricht")
			got = k.stored(t,
				ev("chats.upsert", newChat(userJID(to), nil, ts), "id"),
				ev("outbound-message.upsert", k.outbound(t, to, sent, ts, "Erste Nachricht"), "id"),
			)
			k.adjacent(t, got)
		}},
		{kind: "chats.update", run: func(t *testing.T, k *kindsEnv) {
			// App state: the phone archives a chat (which unpins it, as the
			// apps do) and mutes one.
			const chat = "4915550030203"
			k.waitAppState(t)
			if err := k.n.ArchiveChat(kindsPhone, userOf(t, chat), true); err != nil {
				t.Fatal(err)
			}
			k.stored(t,
				ev("chats.update", chatUpdate(userJID(chat), map[string]any{"archived": true}), "id", "archived"),
				ev("chats.update", chatUpdate(userJID(chat), map[string]any{"pinned": false}), "id", "pinned"),
			)
			until := time.Now().Add(8 * time.Hour).Truncate(time.Second).UTC()
			if err := k.n.MuteChat(kindsPhone, userOf(t, chat), true, until); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("chats.update", chatUpdate(userJID(chat), map[string]any{
				"muted": true, "muteUntil": until.Format("2006-01-02T15:04:05.000Z"),
			}), "id", "muted"))
		}},
		{kind: "chats.delete", run: func(t *testing.T, k *kindsEnv) {
			const chat = "4915550030204"
			k.waitAppState(t)
			if err := k.n.DeleteChat(kindsPhone, userOf(t, chat), true); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("chats.delete", map[string]any{"id": userJID(chat), "deleteMedia": true, "timestamp": recent}, "id"))
		}},
		{kind: "chats.phoneNumberShare", run: func(t *testing.T, k *kindsEnv) {
			// A contact writing under its LID shares its number.
			const from = "4915550030205"
			if _, err := k.n.SharePhoneNumber(from, kindsPhone); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("chats.phoneNumberShare", map[string]any{
				"chat": userJID(from), "lid": k.lid(t, from), "phone": from, "timestamp": recent,
			}, "chat"))
		}},
		{kind: "presence.update", run: func(t *testing.T, k *kindsEnv) {
			// Chat states, which WhatsApp sends without a subscription.
			// The contact writes first: the session learns its LID.
			const from = "4915550030206"
			id, err := k.n.SendText(from, kindsPhone, "Moment")
			if err != nil {
				t.Fatal(err)
			}
			waitStored(t, k.s, k.sess.ID, id)
			who := map[string]any{
				"chat": userJID(from), "participant": userJID(from), "participantPhone": from, "participantLid": k.lid(t, from),
				"lastSeen": nil,
			}
			for _, tt := range []struct {
				state string
				media any
			}{{"composing", nil}, {"recording", "audio"}, {"paused", nil}} {
				if err := k.n.SendPresence(from, userOf(t, kindsPhone), tt.state); err != nil {
					t.Fatal(err)
				}
				k.stored(t, ev("presence.update", with(who, map[string]any{"presence": tt.state, "media": tt.media}), "chat", "presence"))
			}
		}},
		{kind: "labels.edit", run: func(t *testing.T, k *kindsEnv) {
			k.waitAppState(t)
			if err := k.n.EditLabel(kindsPhone, "7", "Abholung heute", 3, false); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("labels.edit", map[string]any{
				"id": "7", "name": "Abholung heute", "color": 3, "predefinedId": nil, "deleted": false, "timestamp": recent,
			}, "id"))
		}},
		{kind: "labels.association", run: func(t *testing.T, k *kindsEnv) {
			const chat = "4915550030207"
			k.waitAppState(t)
			if err := k.n.LabelChat(kindsPhone, "8", userOf(t, chat), true); err != nil {
				t.Fatal(err)
			}
			if err := k.n.LabelMessage(kindsPhone, "8", userOf(t, chat), "3EB0LABEL0001", true); err != nil {
				t.Fatal(err)
			}
			k.stored(t,
				ev("labels.association", map[string]any{
					"labelId": "8", "type": "chat", "chat": userJID(chat), "messageId": nil, "labeled": true, "timestamp": recent,
				}, "labelId", "type"),
				ev("labels.association", map[string]any{
					"labelId": "8", "type": "message", "chat": userJID(chat), "messageId": "3EB0LABEL0001", "labeled": true, "timestamp": recent,
				}, "labelId", "type"),
			)
		}},
		{kind: "messaging-history.set", run: func(t *testing.T, k *kindsEnv) {
			// The phone hands over a chat's history, then push names.
			const chat, named = "4915550030208", "4915550030209"
			when := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
			err := k.n.SendHistory(kindsPhone, wafake.History{
				Chats: []wafake.HistoryChat{{JID: userOf(t, chat), Name: "Ute", Unread: 1, Messages: []wafake.HistoryMessage{
					{ID: "3EB0HIST0001", Text: "Habt ihr morgen noch Tulpen?", Time: when},
					{ID: "3EB0HIST0002", FromMe: true, Text: "Ja, bis 18 Uhr", Time: when.Add(time.Minute)},
				}}},
				PushNames: map[string]string{named: "Paul"},
			})
			if err != nil {
				t.Fatal(err)
			}
			at := func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000Z") }
			sync := func(set map[string]any) map[string]any {
				return with(map[string]any{
					"syncType": "INITIAL_BOOTSTRAP", "chunkOrder": 1, "progress": 100, "part": 1, "parts": 1,
					"conversations": 0, "contacts": 0, "messageCount": 0, "chat": nil, "messages": []any{},
				}, set)
			}
			k.stored(t,
				ev("chats.upsert", map[string]any{
					"id": userJID(chat), "name": "Ute", "lid": nil, "unreadCount": 1, "archived": false, "pinned": false,
					"muteUntil": nil, "readOnly": false, "ephemeralSeconds": 0, "lastMessageAt": nil,
				}, "id"),
				ev("messaging-history.set", sync(map[string]any{
					"conversations": 1, "messageCount": 2, "messages": []any{
						messageData(map[string]any{
							"id": "3EB0HIST0001", "chat": userJID(chat), "sender": userJID(chat), "senderPhone": chat,
							"timestamp": at(when), "type": "text", "text": "Habt ihr morgen noch Tulpen?",
						}),
						messageData(map[string]any{
							"id": "3EB0HIST0002", "chat": userJID(chat), "sender": userJID(kindsPhone), "senderPhone": kindsPhone,
							"senderLid": k.lid(t, kindsPhone), "fromMe": true, "timestamp": at(when.Add(time.Minute)), "type": "text", "text": "Ja, bis 18 Uhr",
						}),
					},
				}), "syncType"),
				ev("contacts.upsert", map[string]any{
					"id": userJID(named), "phone": named, "lid": nil, "pushName": "Paul",
					"fullName": nil, "firstName": nil, "businessName": nil,
				}, "id"),
				ev("messaging-history.set", sync(map[string]any{"syncType": "PUSH_NAME", "progress": nil, "contacts": 1}), "syncType"),
			)
		}},
	}
}

// newChat is the chats.upsert the service derives from a chat's first
// message.
func newChat(id string, name, lastMessageAt any) map[string]any {
	return map[string]any{
		"id": id, "name": name, "lid": nil, "unreadCount": nil, "archived": nil, "pinned": nil,
		"muteUntil": nil, "readOnly": nil, "ephemeralSeconds": nil, "lastMessageAt": lastMessageAt,
	}
}

// adjacent checks that evs follow each other in the log with nothing
// between them.
func (k *kindsEnv) adjacent(t *testing.T, evs []gqlEvent) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Errorf("%s is seq %d, right after %s (seq %d) expected", evs[i].Kind, evs[i].Seq, evs[i-1].Kind, evs[i-1].Seq)
		}
	}
}

// sameTime checks that field a of x's data is field b of y's.
func (k *kindsEnv) sameTime(t *testing.T, x gqlEvent, a string, y gqlEvent, b string) {
	t.Helper()
	var dx, dy map[string]any
	_ = json.Unmarshal(x.Data, &dx)
	_ = json.Unmarshal(y.Data, &dy)
	if dx[a] == nil || dx[a] != dy[b] {
		t.Errorf("%s %s = %v, %s %s = %v: want the same", x.Kind, a, dx[a], y.Kind, b, dy[b])
	}
}
