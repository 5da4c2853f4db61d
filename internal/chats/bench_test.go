package chats_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/whatsapp"
)

// The benchmark's session: benchMessages stored messages, half of them in
// one long chat, the rest spread over benchChats-1 others, every chat made
// by the chat store from its last message's event.
const (
	benchMessages = 100_000
	benchChats    = 1_000
	longChat      = "491700000000@s.whatsapp.net"
)

// benchStores fills a session as described above (bulk inserts for the
// messages, the chat store's Record for each chat's last one).
func benchStores(b *testing.B) *stores {
	b.Helper()
	ctx := context.Background()
	s := newStoresTB(b)
	chatOf := func(i int) string {
		if i%2 == 0 {
			return longChat
		}
		return fmt.Sprintf("4917%08d@s.whatsapp.net", 1+i%(benchChats-1))
	}
	last := map[string]int{}
	const batch = 500
	for start := 0; start < benchMessages; start += batch {
		creates := make([]*ent.MessageCreate, 0, batch)
		for i := start; i < min(start+batch, benchMessages); i++ {
			chat := chatOf(i)
			last[chat] = i
			creates = append(creates, s.db.Message.Create().SetSessionID(session).SetMessageID(fmt.Sprintf("M%06d", i)).
				SetChat(chat).SetSender(chat).SetFromMe(false).SetType("text").SetText("message").
				SetStatus(entmessage.StatusReceived).SetTimestamp(t0.Add(time.Duration(i/3)*time.Second)))
		}
		if err := s.db.Message.CreateBulk(creates...).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for chat, i := range last {
		m := &whatsapp.Message{ID: fmt.Sprintf("M%06d", i), Chat: chat, Sender: chat, Type: "text", Text: "message",
			Timestamp: t0.Add(time.Duration(i/3) * time.Second)}
		if err := s.chats.Record(ctx, session, whatsapp.Event{Kind: whatsapp.KindInboundMessage, Message: m,
			Data: messageData(m)}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkChats: a page of 50 chats of a session with 100,000 messages in
// 1,000 chats, the first and one deep in the list (after 900 chats).
func BenchmarkChats(b *testing.B) {
	s := benchStores(b)
	ctx := context.Background()
	deep := pageAt(b, 900, func(after *string, n int) (string, bool) {
		p, err := s.chats.Chats(ctx, session, chats.ChatsQuery{First: n, After: after})
		if err != nil {
			b.Fatal(err)
		}
		return p.Chats[len(p.Chats)-1].Cursor, p.HasNext
	})
	for _, bc := range []struct {
		name  string
		after *string
	}{{"first", nil}, {"deep", &deep}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.chats.Chats(ctx, session, chats.ChatsQuery{First: 50, After: bc.after})
				if err != nil || len(p.Chats) != 50 {
					b.Fatalf("%d chats, %v", len(p.Chats), err)
				}
			}
		})
	}
}

// BenchmarkMessages: a page of 50 messages of the chat holding 50,000 of
// the session's 100,000, the newest and one deep in its history (before
// the 45,000th newest).
func BenchmarkMessages(b *testing.B) {
	s := benchStores(b)
	ctx := context.Background()
	jid := mustJIDTB(b, longChat)
	deep := pageAt(b, 45_000, func(before *string, n int) (string, bool) {
		p, err := s.chats.Messages(ctx, session, jid, n, before)
		if err != nil {
			b.Fatal(err)
		}
		return p.Cursors[len(p.Cursors)-1], p.HasNext
	})
	for _, bc := range []struct {
		name   string
		before *string
	}{{"first", nil}, {"deep", &deep}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.chats.Messages(ctx, session, jid, 50, bc.before)
				if err != nil || len(p.Messages) != 50 {
					b.Fatalf("%d messages, %v", len(p.Messages), err)
				}
			}
		})
	}
}

// pageAt walks a list by pages of 100 to its at-th item and returns the
// cursor there.
func pageAt(b *testing.B, at int, page func(after *string, n int) (string, bool)) string {
	b.Helper()
	var cursor *string
	for walked := 0; walked < at; walked += 100 {
		c, more := page(cursor, min(100, at-walked))
		if !more {
			b.Fatalf("the list ends before %d", at)
		}
		cursor = &c
	}
	return *cursor
}
