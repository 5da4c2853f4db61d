package messaging

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent/enttest"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestChatSeen checks ChatSeen's answers, first from the store and then
// from what Record remembered: the same answers either way, for the
// message that made a chat known sent again, another message of it, and
// other chats and sessions.
func TestChatSeen(t *testing.T) {
	ctx := context.Background()
	db := enttest.Open(t, "sqlite3", "file:"+filepath.Join(t.TempDir(), "t.db")+"?_foreign_keys=on")
	defer db.Close()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, id := range []string{"s1", "s2"} {
		db.Session.Create().SetID(id).SetOwnerID("u1").ExecX(ctx)
	}
	const chat = "491701234567@s.whatsapp.net"
	record := func(s *Service, session, id, chat string) {
		t.Helper()
		ev := whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: &whatsapp.Message{
			ID: id, Chat: chat, Sender: chat, Type: "text", Text: "hi", Timestamp: time.Unix(1_800_000_000, 0)}}
		if err := s.Record(ctx, session, ev); err != nil {
			t.Fatalf("Record %s: %v", id, err)
		}
	}
	tests := []struct {
		session, chat, id string
		want              bool
	}{
		{"s1", chat, "m1", false}, // the first message, sent again
		{"s1", chat, "m2", true},  // another message of the chat
		{"s1", "other@s.whatsapp.net", "m2", false},
		{"s2", chat, "m2", false}, // the same chat in another session
	}
	check := func(s *Service, when string) {
		t.Helper()
		for _, tc := range tests {
			got, err := s.ChatSeen(ctx, tc.session, tc.chat, tc.id)
			if err != nil || got != tc.want {
				t.Errorf("%s: ChatSeen(%s, %s, %s) = %v, %v; want %v", when, tc.session, tc.chat, tc.id, got, err, tc.want)
			}
		}
	}
	// One service records m1 (it remembers the chat); a second one over
	// the same store has remembered nothing and asks the store.
	recorder := New(Options{DB: db})
	record(recorder, "s1", "m1", chat)
	check(recorder, "remembered")
	check(New(Options{DB: db}), "from the store")
	// Recorded again (WhatsApp re-sent it): still the chat's only message.
	record(recorder, "s1", "m1", chat)
	check(recorder, "re-sent")
}

func TestKnownChatsBound(t *testing.T) {
	var k knownChats
	for i := range maxKnownChats {
		k.stored("s", string(rune('a'+i%26))+time.Duration(i).String(), "m")
	}
	k.stored("s", "c", "m1")
	k.stored("s", "c", "m2") // the first one stays
	if !k.other("s", "c", "m2") || k.other("s", "c", "m1") {
		t.Errorf("after the reset: chat c remembers %q, want m1", k.first[chatKey{"s", "c"}])
	}
	if len(k.first) != 1 {
		t.Errorf("%d chats remembered after the bound was reached, want 1 (a fresh start)", len(k.first))
	}
}
