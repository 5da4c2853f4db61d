package chats_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

const (
	ada     = "491701234567@s.whatsapp.net"
	adaLID  = "200000000000123@lid"
	bob     = "491709876543@s.whatsapp.net"
	group   = "120363025246125888@g.us"
	session = "s1"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// stores is the message store and the chat store over one database,
// recording an event as the sink does: the message store first.
type stores struct {
	db       *ent.Client
	messages *messaging.Store
	chats    *chats.Store
}

func newStores(t *testing.T) *stores { return newStoresTB(t) }

func newStoresTB(t testing.TB) *stores {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID(session).SetOwnerID("u1").ExecX(ctx)
	return &stores{db: db, messages: messaging.NewStore(db, false), chats: chats.NewStore(db, false, func() time.Time { return t0 })}
}

func (s *stores) record(t *testing.T, ev whatsapp.Event) {
	t.Helper()
	ctx := context.Background()
	if err := s.messages.Record(ctx, session, &ev); err != nil {
		t.Fatalf("message store: %s: %v", ev.Kind, err)
	}
	if err := s.chats.Record(ctx, session, ev); err != nil {
		t.Fatalf("chat store: %s: %v", ev.Kind, err)
	}
}

// messageData is the data of a received text m.
func messageData(m *whatsapp.Message) *payload.Message {
	return &payload.Message{ID: m.ID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Timestamp: payload.At(m.Timestamp),
		Type: m.Type, Text: payload.Text(m.Text)}
}

// message is the event of a message: received from sender in chat, or
// (sender "") sent by the account.
func message(id, chat, sender, text string, at time.Time) whatsapp.Event {
	fromMe := sender == ""
	kind := whatsapp.KindInboundMessage
	if fromMe {
		kind, sender = whatsapp.KindOutboundMessage, "4915559990001@s.whatsapp.net"
	}
	d := &payload.Message{ID: id, Chat: chat, Sender: sender, FromMe: fromMe, Timestamp: payload.At(at), Type: "text",
		Text: payload.Text(text), IsGroup: chat == group}
	return whatsapp.Event{Kind: kind, Data: d, Key: id, Message: &whatsapp.Message{ID: id, Chat: chat, Sender: sender, FromMe: fromMe,
		Type: "text", Text: text, Timestamp: at}}
}

func (s *stores) chatList(t *testing.T, q chats.ChatsQuery) chats.ChatPage {
	t.Helper()
	if q.First == 0 {
		q.First = 50
	}
	p, err := s.chats.Chats(context.Background(), session, q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func jids(p chats.ChatPage) []string {
	out := make([]string, len(p.Chats))
	for i, c := range p.Chats {
		out[i] = c.Row.Jid
	}
	return out
}

func same(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestChatsFromMessages: messages make their chats, most recent first; of
// two chats whose last messages share a second, the later-stored first;
// unread counts the received messages once however often WhatsApp sends
// one, and not the account's own; a chat's last message is its newest;
// cursors page through.
func TestChatsFromMessages(t *testing.T) {
	s := newStores(t)
	s.record(t, message("A1", ada, ada, "hi", t0))
	s.record(t, message("B1", bob, bob, "hello", t0.Add(time.Second)))
	s.record(t, message("G1", group, bob, "all", t0.Add(2*time.Second)))
	s.record(t, message("A2", ada, ada, "again", t0.Add(2*time.Second))) // same second as G1, stored later
	s.record(t, message("A2", ada, ada, "again", t0.Add(2*time.Second))) // WhatsApp sent it again
	s.record(t, message("A3", ada, "", "mine", t0.Add(2*time.Second)))
	// A reaction sent here is a record of its own in the message store,
	// but neither the chat's last message nor one of its messages.
	reaction := message("R1", ada, "", "👍", t0.Add(3*time.Second))
	reaction.Message.Type = "reaction"
	s.record(t, reaction)

	p := s.chatList(t, chats.ChatsQuery{})
	if want := []string{ada, group, bob}; !same(jids(p), want) {
		t.Fatalf("chats %v, want %v", jids(p), want)
	}
	c := p.Chats[0]
	if c.Row.UnreadCount != 2 || c.LastMessage == nil || c.LastMessage.MessageID != "A3" || !c.Row.LastMessageAt.Equal(t0.Add(2*time.Second)) {
		t.Errorf("ada's chat: unread %d, last %v at %v; want 2 unread, last A3", c.Row.UnreadCount, c.LastMessage, c.Row.LastMessageAt)
	}
	if c.Person.Phone != "491701234567" || c.Row.IsGroup {
		t.Errorf("ada's chat: phone %q group %v", c.Person.Phone, c.Row.IsGroup)
	}
	if g := p.Chats[1]; !g.Row.IsGroup || g.Row.UnreadCount != 1 {
		t.Errorf("the group: group %v unread %d", g.Row.IsGroup, g.Row.UnreadCount)
	}

	if m, err := s.chats.Messages(context.Background(), session, mustJID(t, ada), 10, nil); err != nil || len(m.Messages) != 3 || m.Messages[0].MessageID != "A3" {
		t.Errorf("ada's messages %v (%v), want A3, A2, A1", m.Messages, err)
	}

	// Paging by one: the same order, then the end.
	var got []string
	var after *string
	for range 4 {
		p := s.chatList(t, chats.ChatsQuery{First: 1, After: after})
		got = append(got, jids(p)...)
		if !p.HasNext {
			break
		}
		after = &p.Chats[len(p.Chats)-1].Cursor
	}
	if want := []string{ada, group, bob}; !same(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
}

// TestChatState: app state archives, pins, mutes and marks read; the
// archived and unread filters; a chats.upsert of a known chat (a group's, at every
// connect) keeps its state; marked unread shows at least one; a deleted
// chat is gone.
func TestChatState(t *testing.T) {
	s := newStores(t)
	s.record(t, message("A1", ada, ada, "hi", t0))
	s.record(t, message("B1", bob, bob, "hello", t0.Add(time.Second)))
	yes, no := true, false
	until := t0.Add(8 * time.Hour)
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Archived: &yes}})
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Pinned: &yes}})
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Muted: &yes, MuteUntil: payload.At(until)}})
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: bob, Muted: &yes}})
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpsert, Data: &payload.Chat{ID: ada, Name: "Ada", Archived: &no, Pinned: &no}})

	if p := s.chatList(t, chats.ChatsQuery{Archived: &yes}); !same(jids(p), []string{ada}) {
		t.Errorf("archived %v, want [%s]", jids(p), ada)
	}
	if p := s.chatList(t, chats.ChatsQuery{Archived: &no}); !same(jids(p), []string{bob}) {
		t.Errorf("not archived %v, want [%s]", jids(p), bob)
	}
	c, err := s.chats.Chat(context.Background(), session, mustJID(t, "491701234567"))
	if err != nil || c == nil {
		t.Fatalf("chat by phone: %v %v", c, err)
	}
	if !c.Row.Archived || !c.Row.Pinned || c.Row.MutedUntil == nil || !c.Row.MutedUntil.Equal(until) || c.Name != "Ada" {
		t.Errorf("ada's chat: archived %v pinned %v muted until %v name %q", c.Row.Archived, c.Row.Pinned, c.Row.MutedUntil, c.Name)
	}
	b, _ := s.chats.Chat(context.Background(), session, mustJID(t, bob))
	if b.Row.MutedUntil == nil || b.Row.MutedUntil.Year() != 9999 {
		t.Errorf("a mute without end: until %v, want year 9999", b.Row.MutedUntil)
	}
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Read: &yes}})
	if c, _ := s.chats.Chat(context.Background(), session, mustJID(t, ada)); c.Row.UnreadCount != 0 {
		t.Errorf("read: unread %d", c.Row.UnreadCount)
	}
	if p := s.chatList(t, chats.ChatsQuery{UnreadOnly: true}); !same(jids(p), []string{bob}) {
		t.Errorf("unread only, ada's read: %v, want [%s]", jids(p), bob)
	}
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Read: &no}})
	if c, _ := s.chats.Chat(context.Background(), session, mustJID(t, ada)); c.Row.UnreadCount != 1 {
		t.Errorf("marked unread: unread %d, want 1", c.Row.UnreadCount)
	}
	if p := s.chatList(t, chats.ChatsQuery{UnreadOnly: true}); !same(jids(p), []string{bob, ada}) {
		t.Errorf("unread only, ada's marked unread: %v, want [%s %s]", jids(p), bob, ada)
	}
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpdate, Data: &payload.ChatUpdate{ID: ada, Muted: &no}})
	if c, _ := s.chats.Chat(context.Background(), session, mustJID(t, ada)); c.Row.MutedUntil != nil {
		t.Errorf("unmuted: until %v", c.Row.MutedUntil)
	}
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsDelete, Data: &payload.ChatDelete{ID: bob}})
	if c, _ := s.chats.Chat(context.Background(), session, mustJID(t, bob)); c != nil {
		t.Errorf("deleted chat still listed: %+v", c.Row)
	}
}

// TestIdentities: a contact writing under its LID alone makes a chat and a
// contact by LID; once a message tells both addresses, the chat and the
// contact move to the phone JID (unread summed), the chat's messages are
// read under both addresses in order, and every address finds the chat.
func TestIdentities(t *testing.T) {
	s := newStores(t)
	ctx := context.Background()
	byLID := message("L1", adaLID, adaLID, "per LID", t0)
	byLID.Data.(*payload.Message).PushName = "Ada"
	s.record(t, byLID)
	if p := s.chatList(t, chats.ChatsQuery{}); !same(jids(p), []string{adaLID}) || p.Chats[0].Person.Phone != "" {
		t.Fatalf("chats %v, want the LID's alone", jids(p))
	}
	both := message("P1", ada, ada, "per phone", t0.Add(time.Second))
	both.Data.(*payload.Message).SenderLID = adaLID
	both.Data.(*payload.Message).SenderPhone = "491701234567"
	s.record(t, both)

	p := s.chatList(t, chats.ChatsQuery{})
	if !same(jids(p), []string{ada}) {
		t.Fatalf("chats %v, want one chat by phone", jids(p))
	}
	if c := p.Chats[0]; c.Row.UnreadCount != 2 || c.Person.LID != adaLID || c.Person.Phone != "491701234567" || c.Name != "Ada" {
		t.Errorf("merged chat: unread %d person %+v name %q", c.Row.UnreadCount, c.Person, c.Name)
	}
	for _, arg := range []string{"491701234567", ada, adaLID} {
		c, err := s.chats.Chat(ctx, session, mustJID(t, arg))
		if err != nil || c == nil || c.Row.Jid != ada {
			t.Errorf("chat(%s): %v %v", arg, c, err)
		}
		m, err := s.chats.Messages(ctx, session, mustJID(t, arg), 10, nil)
		if err != nil || len(m.Messages) != 2 || m.Messages[0].MessageID != "P1" || m.Messages[1].MessageID != "L1" {
			t.Errorf("messages(%s): %v %v", arg, m.Messages, err)
		}
	}
	people, err := s.chats.People(ctx, session, []string{adaLID, ada})
	if err != nil || people[adaLID] != (chats.Person{Phone: "491701234567", LID: adaLID}) || people[ada] != people[adaLID] {
		t.Errorf("people %v %v", people, err)
	}
	cs, err := s.chats.Contacts(ctx, session, 10, nil, nil)
	if err != nil || len(cs.Contacts) != 1 || cs.Contacts[0].Jid != ada || cs.Contacts[0].Lid != adaLID || cs.Contacts[0].PushName != "Ada" {
		t.Errorf("contacts %v %v, want Ada by phone with her LID", cs.Contacts, err)
	}
}

// TestContacts: contacts by name; search ignores case and matches any
// part of the name, push name, business name or phone; cursors page.
func TestContacts(t *testing.T) {
	s := newStores(t)
	ctx := context.Background()
	for _, c := range []*payload.Contact{
		{ID: ada, Phone: "491701234567", LID: adaLID, FullName: "Ada Lovelace", PushName: "Ada"},
		{ID: bob, Phone: "491709876543", FirstName: "bob"},
		{ID: "441234567890@s.whatsapp.net", Phone: "441234567890", BusinessName: "Zebra Ltd"},
		{ID: "331234567890@s.whatsapp.net", Phone: "331234567890", PushName: "Émile"},
	} {
		s.record(t, whatsapp.Event{Kind: whatsapp.KindContactsUpsert, Data: c})
	}
	s.record(t, whatsapp.Event{Kind: whatsapp.KindContactsUpdate, Data: &payload.ContactUpdate{ID: bob, Phone: "491709876543", PushName: "Bobby"}})

	names := func(p chats.ContactPage) []string {
		out := make([]string, len(p.Contacts))
		for i, c := range p.Contacts {
			out[i] = c.Phone
		}
		return out
	}
	all, err := s.chats.Contacts(ctx, session, 100, nil, nil)
	if want := []string{"491701234567", "491709876543", "441234567890", "331234567890"}; err != nil || !same(names(all), want) {
		t.Errorf("by name %v (%v), want %v", names(all), err, want)
	}
	if c := all.Contacts[1]; c.Name != "bob" || c.PushName != "Bobby" {
		t.Errorf("bob: name %q push name %q", c.Name, c.PushName)
	}
	for _, tt := range []struct{ search, want string }{
		{"LOVE", "[491701234567]"},
		{"bobb", "[491709876543]"},
		{"zebra", "[441234567890]"},
		{"émile", "[331234567890]"},
		{"ÉMILE", "[331234567890]"},
		{"4412", "[441234567890]"},
		{"%", "[]"},
		{"nobody", "[]"},
	} {
		p, err := s.chats.Contacts(ctx, session, 100, nil, &tt.search)
		if got := fmt.Sprint(names(p)); err != nil || got != tt.want {
			t.Errorf("search %q: %s (%v), want %s", tt.search, got, err, tt.want)
		}
	}
	var got []string
	var after *string
	for range 5 {
		p, err := s.chats.Contacts(ctx, session, 3, after, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(p)...)
		if !p.HasNext {
			break
		}
		after = &p.Cursors[len(p.Cursors)-1]
	}
	if !same(got, names(all)) {
		t.Errorf("paged %v, want %v", got, names(all))
	}
}

// TestHistoryMessages: the messages of a history sync are stored and make
// their chat's last message, without counting as unread (the sync's
// chats.upsert says the unread count); a reaction in it is no message.
func TestHistoryMessages(t *testing.T) {
	s := newStores(t)
	ctx := context.Background()
	unread := 3
	s.record(t, whatsapp.Event{Kind: whatsapp.KindChatsUpsert, Data: &payload.Chat{ID: ada, Name: "Ada", UnreadCount: &unread, LastMessageAt: payload.At(t0)}})
	s.record(t, whatsapp.Event{Kind: whatsapp.KindHistorySet, Data: &payload.HistorySet{SyncType: "ON_DEMAND"}, History: []whatsapp.Message{
		{ID: "H1", Chat: ada, Sender: ada, Type: "text", Text: "older", Timestamp: t0.Add(-time.Hour)},
		{ID: "H2", Chat: ada, Sender: ada, Type: "text", Text: "newest", Timestamp: t0},
		{ID: "H3", Chat: ada, Sender: ada, Type: "reaction", Text: "👍", Timestamp: t0},
	}})
	c, err := s.chats.Chat(ctx, session, mustJID(t, ada))
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if c.Row.UnreadCount != 3 || c.LastMessage == nil || c.LastMessage.MessageID != "H2" {
		t.Errorf("chat: unread %d last %v; want 3 and H2", c.Row.UnreadCount, c.LastMessage)
	}
	m, err := s.chats.Messages(ctx, session, mustJID(t, ada), 10, nil)
	if err != nil || len(m.Messages) != 2 || m.Messages[0].MessageID != "H2" || m.Messages[1].MessageID != "H1" {
		t.Errorf("messages %v %v, want H2, H1", m.Messages, err)
	}
}

// TestMessagesPaging: newest first; of messages of the same second the
// later-stored first; before pages back to the end; bad arguments are
// BAD_USER_INPUT naming the argument.
func TestMessagesPaging(t *testing.T) {
	s := newStores(t)
	ctx := context.Background()
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("M%d", i)
		s.record(t, message(id, ada, ada, id, t0.Add(time.Duration(i/2)*time.Second))) // pairs share a second
		want = append([]string{id}, want...)
	}
	var got []string
	var before *string
	for range 10 {
		p, err := s.chats.Messages(ctx, session, mustJID(t, ada), 2, before)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Messages {
			got = append(got, m.MessageID)
		}
		if !p.HasNext {
			break
		}
		before = &p.Cursors[len(p.Cursors)-1]
	}
	if !same(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
	bad := "not-a-cursor"
	for _, tt := range []struct {
		name  string
		err   error
		field string
	}{
		{"first 0", second(s.chats.Messages(ctx, session, mustJID(t, ada), 0, nil)), "first"},
		{"first 101", second(s.chats.Messages(ctx, session, mustJID(t, ada), 101, nil)), "first"},
		{"bad before", second(s.chats.Messages(ctx, session, mustJID(t, ada), 5, &bad)), "before"},
		{"bad after", second(s.chats.Chats(ctx, session, chats.ChatsQuery{First: 5, After: &bad})), "after"},
		{"bad contacts after", second(s.chats.Contacts(ctx, session, 5, &bad, nil)), "after"},
	} {
		f := fault.From(tt.err)
		if f == nil || f.Code != fault.Invalid || f.Field != tt.field {
			t.Errorf("%s: %v, want BAD_USER_INPUT on %s", tt.name, tt.err, tt.field)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func mustJID(t *testing.T, s string) whatsapp.JID { return mustJIDTB(t, s) }

func mustJIDTB(t testing.TB, s string) whatsapp.JID {
	t.Helper()
	j, err := whatsapp.ParseRecipient("chat", s)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
