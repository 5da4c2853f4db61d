package whatsapp

import (
	"fmt"
	"testing"
	"time"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestHistorySync: a history sync becomes chats.upsert for its chats,
// then messaging-history.set in parts of at most historyPartSize messages;
// the push names of a PUSH_NAME sync become contacts.upsert.
func TestHistorySync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	chat := phoneJID(peer)
	when := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	const total = historyPartSize + 20
	msgs := make([]wafake.HistoryMessage, total)
	for i := range msgs {
		msgs[i] = wafake.HistoryMessage{ID: fmt.Sprintf("3EB0H%04d", i), FromMe: i%2 == 1, Text: fmt.Sprintf("old %d", i), Time: when.Add(time.Duration(i) * time.Minute)}
	}
	n := len(e.pub.events("s1"))
	err := e.net.SendHistory(phone, wafake.History{
		Chats:     []wafake.HistoryChat{{JID: chat, Name: "Pia", Unread: 2, Archived: true, Messages: msgs}},
		PushNames: map[string]string{peer2: "Paul"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The last event of the sync is the push names' part. whatsmeow acks
	// a history notification before its handler has run, so settle alone
	// does not mean every event is published.
	e.eventAfter("s1", n, KindHistorySet, func(d map[string]any) bool { return d["syncType"] == "PUSH_NAME" })
	e.settle(st)
	var kinds []string
	var sets []map[string]any
	for _, ev := range e.pub.events("s1")[n:] {
		kinds = append(kinds, ev.Kind)
		switch ev.Kind {
		case KindChatsUpsert:
			wantData(t, "chats.upsert", ev.Data, map[string]any{
				"id": chat.String(), "name": "Pia", "unreadCount": 2, "archived": true, "pinned": false, "muteUntil": nil,
			})
		case KindContactsUpsert:
			wantData(t, "contacts.upsert", ev.Data, map[string]any{
				"id": phoneJID(peer2).String(), "phone": peer2, "pushName": "Paul", "fullName": nil, "businessName": nil,
			})
		case KindHistorySet:
			sets = append(sets, ev.Data)
			// The message store's records: one per message, in order.
			msgs, _ := ev.Data["messages"].([]any)
			if len(ev.History) != len(msgs) {
				t.Fatalf("a history set of %d messages carries %d records", len(msgs), len(ev.History))
			}
			for i, rec := range ev.History {
				if m, _ := msgs[i].(map[string]any); rec.ID != m["id"] || rec.Chat != chat.String() || rec.Text != m["text"] || rec.FromMe != m["fromMe"] {
					t.Errorf("record %d %+v, want message %v", i, rec, m)
				}
			}
		}
		if ev.Message != nil {
			t.Errorf("a history event carries a message record: %+v", ev)
		}
	}
	want := []string{KindChatsUpsert, KindHistorySet, KindHistorySet, KindContactsUpsert, KindHistorySet}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("published %v, want %v", kinds, want)
	}
	for i, set := range sets[:2] {
		wantData(t, "messaging-history.set", set, map[string]any{
			"syncType": "INITIAL_BOOTSTRAP", "chunkOrder": 1, "progress": 100, "part": i + 1, "parts": 2,
			"conversations": 1, "contacts": 0, "messageCount": total,
		})
	}
	first, _ := sets[0]["messages"].([]any)
	second, _ := sets[1]["messages"].([]any)
	if len(first) != historyPartSize || len(second) != total-historyPartSize {
		t.Fatalf("parts of %d and %d messages, want %d and %d", len(first), len(second), historyPartSize, total-historyPartSize)
	}
	received, _ := first[0].(map[string]any)
	wantData(t, "history message", received, map[string]any{
		"id": "3EB0H0000", "chat": chat.String(), "sender": chat.String(), "senderPhone": peer, "fromMe": false,
		"type": "text", "text": "old 0", "timestamp": Timestamp(when), "isGroup": false,
	})
	sent, _ := second[len(second)-1].(map[string]any)
	wantData(t, "history message", sent, map[string]any{
		"id": fmt.Sprintf("3EB0H%04d", total-1), "chat": chat.String(), "sender": phoneJID(phone).String(), "fromMe": true,
		"text": fmt.Sprintf("old %d", total-1),
	})
	wantData(t, "push names", sets[2], map[string]any{
		"syncType": "PUSH_NAME", "part": 1, "parts": 1, "conversations": 0, "contacts": 1, "messageCount": 0,
		"messages": []any{}, "progress": nil,
	})
}
