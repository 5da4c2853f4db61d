package chats

import (
	"context"
	"fmt"
	"strings"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entchat "github.com/wagraph/wagraph/ent/chat"
	entcontact "github.com/wagraph/wagraph/ent/contact"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/predicate"
	"github.com/wagraph/wagraph/whatsapp"
)

// Chat is a chat as the reads answer it: the row, its last message, the
// name shown (the chat's own, else its contact's) and, for a user, the
// phone and LID known.
type Chat struct {
	Row         *ent.Chat
	Cursor      string
	LastMessage *ent.Message
	Name        string
	Person      Person
}

// ChatPage is one page of chats, most recent first.
type ChatPage struct {
	Chats   []Chat
	HasNext bool
}

// ChatsQuery asks for a page of chats: First from after (a cursor; nil
// from the most recent); Archived, when set, only those archived or not;
// UnreadOnly, only those with unread messages.
type ChatsQuery struct {
	First      int
	After      *string
	Archived   *bool
	UnreadOnly bool
}

// Chats lists the session's chats, most recent first (by the last
// message's time; of two at the same time, the later-stored first).
func (s *Store) Chats(ctx context.Context, sessionID string, q ChatsQuery) (ChatPage, error) {
	if err := checkFirst("first", q.First); err != nil {
		return ChatPage{}, err
	}
	after, err := parseCursor("after", q.After)
	if err != nil {
		return ChatPage{}, err
	}
	where := []predicate.Chat{entchat.SessionID(sessionID)}
	if q.Archived != nil {
		where = append(where, entchat.Archived(*q.Archived))
	}
	if q.UnreadOnly {
		where = append(where, entchat.UnreadCountGT(0))
	}
	if after != nil {
		where = append(where, func(s *entsql.Selector) {
			s.Where(entsql.CompositeLT([]string{s.C(entchat.FieldActiveAt), s.C(entchat.FieldActiveRow), s.C(entchat.FieldID)},
				after.time(), after.Row, after.ID))
		})
	}
	rows, err := s.db.Chat.Query().Where(where...).
		Order(ent.Desc(entchat.FieldActiveAt), ent.Desc(entchat.FieldActiveRow), ent.Desc(entchat.FieldID)).
		Limit(q.First + 1).All(ctx)
	if err != nil {
		return ChatPage{}, fmt.Errorf("list the chats of session %s: %w", sessionID, err)
	}
	page := ChatPage{HasNext: len(rows) > q.First}
	rows = rows[:min(len(rows), q.First)]
	page.Chats, err = s.complete(ctx, sessionID, rows)
	return page, err
}

// Chat is the session's chat jid names (a phone, user JID, LID or group
// JID: a user's chat whichever address it is stored under); nil when the
// store has none.
func (s *Store) Chat(ctx context.Context, sessionID string, jid whatsapp.JID) (*Chat, error) {
	addrs, err := s.addresses(ctx, sessionID, jid)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Chat.Query().Where(entchat.SessionID(sessionID), entchat.Or(entchat.JidIn(addrs...), entchat.LidIn(addrs...))).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up chat %s: %w", jid, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	// The phone JID's row first, when both are stored.
	best := rows[0]
	for _, r := range rows {
		if r.Jid == addrs[0] {
			best = r
		}
	}
	out, err := s.complete(ctx, sessionID, []*ent.Chat{best})
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// complete reads what the rows point at: last messages, contacts' names,
// phones and LIDs, in one query each.
func (s *Store) complete(ctx context.Context, sessionID string, rows []*ent.Chat) ([]Chat, error) {
	out := make([]Chat, len(rows))
	var lastIDs, users []string
	for i, r := range rows {
		out[i] = Chat{Row: r, Name: r.Name,
			Cursor: cursor{At: r.ActiveAt.UnixNano(), Row: r.ActiveRow, ID: r.ID}.String()}
		if r.LastMessageID != "" {
			lastIDs = append(lastIDs, r.LastMessageID)
		}
		if !r.IsGroup {
			users = append(users, r.Jid)
		}
	}
	if len(lastIDs) > 0 {
		ms, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageIDIn(lastIDs...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the chats' last messages: %w", err)
		}
		byID := make(map[string]*ent.Message, len(ms))
		for _, m := range ms {
			byID[m.MessageID] = m
		}
		for i := range out {
			out[i].LastMessage = byID[rows[i].LastMessageID]
		}
	}
	if len(users) == 0 {
		return out, nil
	}
	people, err := s.People(ctx, sessionID, users)
	if err != nil {
		return nil, err
	}
	contacts, err := s.db.Contact.Query().Where(entcontact.SessionID(sessionID), entcontact.JidIn(users...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the chats' contacts: %w", err)
	}
	names := make(map[string]string, len(contacts))
	for _, c := range contacts {
		names[c.Jid] = firstOf(c.Name, c.PushName, c.BusinessName)
	}
	for i := range out {
		if rows[i].IsGroup {
			continue
		}
		out[i].Person = people[rows[i].Jid]
		if out[i].Person.LID == "" {
			out[i].Person.LID = rows[i].Lid
		}
		if out[i].Name == "" {
			out[i].Name = names[rows[i].Jid]
		}
	}
	return out, nil
}

// MessagePage is one page of a chat's messages, newest first; Cursors[i]
// is the cursor after Messages[i].
type MessagePage struct {
	Messages []*ent.Message
	Cursors  []string
	HasNext  bool
}

// Messages lists the messages of the chat jid names, newest first (of two
// of the same second, the later-stored first), before the cursor before
// (nil: from the newest). A user's chat is read under every address the
// session knows for them (phone JID and LID), merged in order. Scheduled
// sends not made yet are not in the chat, nor reactions and edits (they
// show on their message).
func (s *Store) Messages(ctx context.Context, sessionID string, jid whatsapp.JID, first int, before *string) (MessagePage, error) {
	if err := checkFirst("first", first); err != nil {
		return MessagePage{}, err
	}
	from, err := parseCursor("before", before)
	if err != nil {
		return MessagePage{}, err
	}
	addrs, err := s.addresses(ctx, sessionID, jid)
	if err != nil {
		return MessagePage{}, err
	}
	// One query per address, each a range scan of the index (session,
	// chat, timestamp, id): an IN over both would make the database sort
	// every message of the chat to find the newest.
	var all []*ent.Message
	for _, a := range addrs {
		q := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.Chat(a),
			entmessage.StatusNEQ(entmessage.StatusScheduled), entmessage.TypeNotIn(notInChat...))
		if from != nil {
			q.Where(func(s *entsql.Selector) {
				s.Where(entsql.CompositeLT([]string{s.C(entmessage.FieldTimestamp), s.C(entmessage.FieldID)}, from.time(), from.ID))
			})
		}
		ms, err := q.Order(ent.Desc(entmessage.FieldTimestamp), ent.Desc(entmessage.FieldID)).Limit(first + 1).All(ctx)
		if err != nil {
			return MessagePage{}, fmt.Errorf("list the messages of chat %s: %w", a, err)
		}
		all = merge(all, ms)
	}
	page := MessagePage{HasNext: len(all) > first}
	page.Messages = all[:min(len(all), first)]
	page.Cursors = make([]string, len(page.Messages))
	for i, m := range page.Messages {
		page.Cursors[i] = cursor{At: m.Timestamp.UnixNano(), ID: m.ID}.String()
	}
	return page, nil
}

// merge merges two lists of messages newest first.
func merge(a, b []*ent.Message) []*ent.Message {
	if len(a) == 0 {
		return b
	}
	out := make([]*ent.Message, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if later(a[0].Timestamp, a[0].ID, b[0].Timestamp, b[0].ID) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// ContactPage is one page of contacts, by name.
type ContactPage struct {
	Contacts []*ent.Contact
	Cursors  []string
	HasNext  bool
}

// Contacts lists the session's contacts by name (the address book's, else
// the push name, the business name, the phone), after the cursor after;
// with search, only those whose name, push name, business name or phone
// holds it, ignoring case.
func (s *Store) Contacts(ctx context.Context, sessionID string, first int, after, search *string) (ContactPage, error) {
	if err := checkFirst("first", first); err != nil {
		return ContactPage{}, err
	}
	from, err := parseCursor("after", after)
	if err != nil {
		return ContactPage{}, err
	}
	q := s.db.Contact.Query().Where(entcontact.SessionID(sessionID))
	if search != nil && strings.TrimSpace(*search) != "" {
		q.Where(entcontact.SearchContains(strings.ToLower(strings.TrimSpace(*search))))
	}
	if from != nil {
		q.Where(func(s *entsql.Selector) {
			s.Where(entsql.CompositeGT([]string{s.C(entcontact.FieldSortName), s.C(entcontact.FieldID)}, from.Name, from.ID))
		})
	}
	rows, err := q.Order(ent.Asc(entcontact.FieldSortName), ent.Asc(entcontact.FieldID)).Limit(first + 1).All(ctx)
	if err != nil {
		return ContactPage{}, fmt.Errorf("list the contacts of session %s: %w", sessionID, err)
	}
	page := ContactPage{HasNext: len(rows) > first}
	page.Contacts = rows[:min(len(rows), first)]
	page.Cursors = make([]string, len(page.Contacts))
	for i, c := range page.Contacts {
		page.Cursors[i] = cursor{Name: c.SortName, ID: c.ID}.String()
	}
	return page, nil
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
