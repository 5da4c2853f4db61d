package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// messageRows: messages and their status (events.md, Messages; Receipts and
// message status).
func messageRows() []kindRow {
	return []kindRow{
		{kind: "inbound-message.upsert", run: func(t *testing.T, k *kindsEnv) {
			const from = "4915550030101"
			photo := pngImage(t, 16, 12)
			img, err := k.n.SendImage(from, kindsPhone, photo, "image/png", "Das Angebot von heute")
			if err != nil {
				t.Fatal(err)
			}
			text, err := k.n.SendText(from, kindsPhone, "Guten Morgen")
			if err != nil {
				t.Fatal(err)
			}
			sender := map[string]any{
				"chat": userJID(from), "sender": userJID(from), "senderPhone": from, "senderLid": k.lid(t, from),
				"pushName": "Contact " + from,
			}
			k.stored(t,
				ev("inbound-message.upsert", messageData(with(sender, map[string]any{
					"id": img, "type": "image", "caption": "Das Angebot von heute", "mimetype": "image/png", "size": len(photo),
					"mediaUrl": "/api/v1/session/" + k.sess.ID + "/message/" + img + "/media",
				})), "id"),
				ev("inbound-message.upsert", messageData(with(sender, map[string]any{"id": text, "type": "text", "text": "Guten Morgen"})), "id"),
			)
		}},
		{kind: "outbound-message.upsert", run: func(t *testing.T, k *kindsEnv) {
			// Sent through the API, and written on the phone (to itself:
			// the account's message from another device).
			const to = "4915550030102"
			id, ts := k.sendText(t, to, "Bis morgen")
			k.stored(t, ev("outbound-message.upsert", k.outbound(t, to, id, ts, "Bis morgen"), "id"))
			self, err := k.n.SendText(kindsPhone, kindsPhone, "Notiz an mich")
			if err != nil {
				t.Fatal(err)
			}
			// The phone's stanza carries its push name (wafake's default).
			k.stored(t, ev("outbound-message.upsert", k.outbound(t, kindsPhone, self, recent, "Notiz an mich"), "id"))
		}},
		{kind: "messages.send", run: func(t *testing.T, k *kindsEnv) {
			// Derived: the outcome of a send through the API, after its
			// outbound-message.upsert. No stanza produces it.
			const to = "4915550030103"
			id, ts := k.sendText(t, to, "Ist angekommen?")
			k.stored(t,
				ev("outbound-message.upsert", k.outbound(t, to, id, ts, "Ist angekommen?"), "id"),
				ev("messages.send", status(map[string]any{"id": id, "chat": userJID(to), "status": "sent", "timestamp": ts}), "id"),
			)
			// A number ending in 0000 is not on WhatsApp (README): the send
			// fails, and says why.
			const nobody = "4915550310000"
			why := "number " + nobody + " is not on WhatsApp"
			res := k.s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!, $n: String!) { sendText(sessionId: $s, input: {number: $n, text: "Hallo?"}) { messageId } }`,
				map[string]any{"s": k.sess.ID, "n": nobody})
			if len(res.Errors) != 1 || res.Errors[0].Message != why {
				t.Fatalf("send to %s: %+v, want the error %q", nobody, res.Errors, why)
			}
			k.stored(t, ev("messages.send", status(map[string]any{
				"id": nonEmpty, "chat": userJID(nobody), "status": "failed", "error": why, "timestamp": recent,
			}), "chat", "status"))
		}},
		{kind: "messages.reaction", run: func(t *testing.T, k *kindsEnv) {
			const to = "4915550030104"
			id, _ := k.sendText(t, to, "Gefällt es dir?")
			received(t, k.s, to, id) // the contact reacts to a message it has
			reaction, err := k.n.SendReaction(to, kindsPhone, id, "👍")
			if err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("messages.reaction", map[string]any{
				"id": id, "chat": userJID(to), "sender": userJID(to), "senderPhone": to, "senderLid": k.lid(t, to),
				"fromMe": false, "timestamp": recent, "messageId": reaction,
				"reaction": map[string]any{
					"text": "👍",
					"key":  map[string]any{"id": id, "remoteJid": userJID(kindsPhone), "fromMe": false, "participant": nil},
				},
			}, "id"))
		}},
		{kind: "messages.delete", run: func(t *testing.T, k *kindsEnv) {
			// App state: deleted for me on the phone; a cleared chat.
			const from = "4915550030105"
			k.waitAppState(t)
			id, err := k.n.SendText(from, kindsPhone, "Bitte löschen")
			if err != nil {
				t.Fatal(err)
			}
			chat := userOf(t, from)
			if err := k.n.DeleteMessageForMe(kindsPhone, chat, wafake.MessageKey{ID: id}, true); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("messages.delete", map[string]any{
				"id": id, "chat": userJID(from), "fromMe": false, "sender": nil, "all": false, "deleteMedia": true, "timestamp": recent,
			}, "id"))
			if err := k.n.ClearChat(kindsPhone, chat, false); err != nil {
				t.Fatal(err)
			}
			k.stored(t,
				ev("chats.update", chatUpdate(userJID(from), map[string]any{"cleared": true}), "id", "cleared"),
				ev("messages.delete", map[string]any{
					"id": nil, "chat": userJID(from), "fromMe": nil, "sender": nil, "all": true, "deleteMedia": false, "timestamp": recent,
				}, "chat", "all"),
			)
		}},
		{kind: "messages.media-update", run: func(t *testing.T, k *kindsEnv) {
			// Media the media host deleted: the media route asks the
			// phone to upload it again; the phone's answer is stored, and
			// the route serves the media from its new location.
			const from = "4915550030106"
			img := pngImage(t, 8, 8)
			id, err := k.n.SendImage(from, kindsPhone, img, "image/png", "")
			if err != nil {
				t.Fatal(err)
			}
			waitStored(t, k.s, k.sess.ID, id)
			if err := k.n.ExpireMedia(id, false); err != nil {
				t.Fatal(err)
			}
			route := "/session/" + k.sess.ID + "/message/" + id + "/media"
			res := k.s.REST(t, http.MethodGet, route, apptest.AdminToken, "")
			if want := "media of message " + id + " is no longer on WhatsApp's servers: the phone was asked to upload it again"; res.Status != http.StatusNotFound || !strings.HasPrefix(res.Message(t), want) {
				t.Errorf("media after it expired: %d %s, want 404 %q…", res.Status, res.Body, want)
			}
			k.stored(t, ev("messages.media-update", map[string]any{
				"id": id, "chat": userJID(from), "fromMe": false, "mediaUrl": "/api/v1" + route, "error": nil, "timestamp": recent,
			}, "id"))
			res = k.s.REST(t, http.MethodGet, route, apptest.AdminToken, "")
			if res.Status != http.StatusOK || !bytes.Equal(res.Body, img) {
				t.Errorf("media after the phone uploaded it again: %d, %d bytes, want 200 and the %d bytes sent", res.Status, len(res.Body), len(img))
			}
		}},
		{kind: "messages.update", run: func(t *testing.T, k *kindsEnv) {
			// A receipt of a message sent through the API; a vote in a
			// contact's poll.
			const to = "4915550030107"
			id, _ := k.sendText(t, to, "Kommst du?")
			if err := k.n.SendReceipt(to, userOf(t, kindsPhone), []string{id}, "read"); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("messages.update", status(map[string]any{"id": id, "chat": userJID(to), "status": "read", "timestamp": recent}), "id", "status"))

			poll, err := k.n.SendPoll(to, kindsPhone, "Wann?", []string{"Samstag", "Sonntag"})
			if err != nil {
				t.Fatal(err)
			}
			vote, err := k.n.VotePoll(poll, kindsPhone, []string{"Samstag"})
			if err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("messages.update", status(map[string]any{
				"id": poll, "chat": userJID(to), "status": "voted", "timestamp": recent, "messageId": vote,
				"vote": map[string]any{
					"pollId": poll, "voter": userJID(to), "voterPhone": to, "voterLid": k.lid(t, to),
					"selectedOptions": []string{"Samstag"}, "selectedHashes": []string{sha([]byte("Samstag"))},
				},
			}), "id", "status"))
		}},
		{kind: "message-receipt.update", run: func(t *testing.T, k *kindsEnv) {
			// A member reads the account's message in a group.
			const host, member = "4915550030108", "4915550030109"
			g, err := k.n.CreateGroup(host, "Quittungen", kindsPhone, member)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := k.sendText(t, g.String(), "Alle da?")
			if err := k.n.SendGroupReceipt(member, g, userOf(t, kindsPhone), []string{id}, "read"); err != nil {
				t.Fatal(err)
			}
			k.stored(t, ev("message-receipt.update", map[string]any{
				"id": id, "chat": g.String(), "status": "read", "timestamp": recent,
				"participant": userJID(member), "participantPhone": member, "participantLid": k.lid(t, member),
			}, "id"))
		}},
	}
}

// outbound is the outbound-message.upsert of text the account sent to
// (or wrote to itself) as message id at timestamp.
func (k *kindsEnv) outbound(t *testing.T, to, id string, timestamp any, text string) map[string]any {
	t.Helper()
	return messageData(map[string]any{
		"id": id, "chat": userJID(to), "sender": userJID(kindsPhone), "senderPhone": kindsPhone, "senderLid": k.lid(t, kindsPhone),
		// The account's name, which the phone gave the device at link.
		"fromMe": true, "timestamp": timestamp, "type": "text", "text": text, "pushName": "Contact " + kindsPhone,
	})
}

// status is a messages.update's (or messages.send's) data: every key null
// but those set.
func status(set map[string]any) map[string]any {
	return with(map[string]any{
		"id": nil, "chat": nil, "status": nil, "error": nil, "timestamp": recent, "messageId": nil,
		"text": nil, "caption": nil, "sender": nil, "vote": nil,
	}, set)
}

// chatUpdate is a chats.update's data: every key null but those set.
func chatUpdate(id string, set map[string]any) map[string]any {
	return with(map[string]any{
		"id": id, "archived": nil, "pinned": nil, "muted": nil, "muteUntil": nil, "read": nil,
		"unreadCount": nil, "cleared": nil, "ephemeralSeconds": nil, "timestamp": recent,
	}, set)
}
