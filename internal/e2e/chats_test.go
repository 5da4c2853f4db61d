package e2e

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The stored reads' GraphQL, with every field of Chat, Message and Contact
// they add.
const (
	chatFields    = `jid name isGroup phone lid unreadCount lastMessageAt archived pinned mutedUntil lastMessage { id text }`
	messageFields = `id chat sender senderPhone senderLid fromMe type text status edited mediaUrl reactions { emoji sender fromMe }`
	chatsQuery    = `query($s: ID!, $n: Int, $a: String) { chats(sessionId: $s, first: $n, after: $a) { edges { cursor node { ` + chatFields + ` } } pageInfo { hasNextPage endCursor } } }`
	chatQuery     = `query($s: ID!, $j: String!) { chat(sessionId: $s, jid: $j) { ` + chatFields + ` } }`
	messagesQuery = `query($s: ID!, $c: String!, $n: Int, $b: String) { messages(sessionId: $s, chat: $c, first: $n, before: $b) { edges { cursor node { ` + messageFields + ` } } pageInfo { hasNextPage endCursor } } }`
	contactsQuery = `query($s: ID!, $n: Int, $a: String, $q: String) { contacts(sessionId: $s, first: $n, after: $a, search: $q) { edges { cursor node { jid phone lid name pushName businessName } } pageInfo { hasNextPage endCursor } } }`
)

type (
	gqlChat struct {
		JID, Name        string
		IsGroup          bool
		Phone, LID       *string
		UnreadCount      int
		LastMessageAt    *time.Time
		Archived, Pinned bool
		MutedUntil       *time.Time
		LastMessage      *struct{ ID, Text string }
	}
	gqlStored struct {
		ID, Chat, Sender       string
		SenderPhone, SenderLid *string
		FromMe                 bool
		Type, Text, Status     string
		Edited                 bool
		MediaURL               *string
		Reactions              []struct {
			Emoji, Sender string
			FromMe        bool
		}
	}
	gqlContact struct {
		JID                        string
		Phone, LID, Name, PushName *string
		BusinessName               *string
	}
	pageInfo struct {
		HasNextPage bool
		EndCursor   *string
	}
)

func chatPage(t *testing.T, s *apptest.Server, sessionID string, first int, after *string) ([]gqlChat, pageInfo) {
	t.Helper()
	var out struct {
		Chats struct {
			Edges    []struct{ Node gqlChat }
			PageInfo pageInfo
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, chatsQuery, map[string]any{"s": sessionID, "n": first, "a": after}, &out)
	nodes := make([]gqlChat, len(out.Chats.Edges))
	for i, e := range out.Chats.Edges {
		nodes[i] = e.Node
	}
	return nodes, out.Chats.PageInfo
}

func messagePage(t *testing.T, s *apptest.Server, sessionID, chat string, first int, before *string) ([]gqlStored, pageInfo) {
	t.Helper()
	var out struct {
		Messages struct {
			Edges    []struct{ Node gqlStored }
			PageInfo pageInfo
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, messagesQuery, map[string]any{"s": sessionID, "c": chat, "n": first, "b": before}, &out)
	nodes := make([]gqlStored, len(out.Messages.Edges))
	for i, e := range out.Messages.Edges {
		nodes[i] = e.Node
	}
	return nodes, out.Messages.PageInfo
}

func contactPage(t *testing.T, s *apptest.Server, sessionID string, first int, after, search *string) ([]gqlContact, pageInfo) {
	t.Helper()
	var out struct {
		Contacts struct {
			Edges    []struct{ Node gqlContact }
			PageInfo pageInfo
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, contactsQuery, map[string]any{"s": sessionID, "n": first, "a": after, "q": search}, &out)
	nodes := make([]gqlContact, len(out.Contacts.Edges))
	for i, e := range out.Contacts.Edges {
		nodes[i] = e.Node
	}
	return nodes, out.Contacts.PageInfo
}

// inboundData waits for the session's inbound-message.upsert of id and
// returns its data.
func inboundData(t *testing.T, s *apptest.Server, sessionID, id string) map[string]any {
	t.Helper()
	var found map[string]any
	testclient.Until(t, 15*time.Second, "the inbound-message.upsert of "+id, func() bool {
		for _, d := range eventData(t, s, sessionID, "INBOUND_MESSAGE_UPSERT") {
			if d["id"] == id {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

// TestStoredChats: messages received and sent through the simulated
// network make the session's chats (most recent first, unread counts,
// last message, phone and LID), a chat's messages (newest first, paged
// back with before, each sender's phone and LID whichever address the
// message used), and its contacts (searched, paged); a reaction and an
// edit show on the message; mediaUrl serves the media. GraphQL and REST
// answer alike, and still while the session is disconnected.
func TestStoredChats(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ada, bob = apptest.LinkedPhone, "4915550330001", "4915550330002"

	hello, err := n.SendText(ada, phone, "Hallo von Ada")
	if err != nil {
		t.Fatal(err)
	}
	helloData := inboundData(t, s, sess.ID, hello)
	adaLID, _ := helloData["senderLid"].(string)
	info, ok := n.Account(ada)
	if !ok {
		t.Fatal("the network has no account for ada")
	}
	mine := restSend(t, s, sess.ID, "text", map[string]any{"number": ada, "text": "Hallo Ada"})
	// Ada writes under her LID: the same chat.
	byLID, err := n.SendMessageByLID(ada, phone, &waE2E.Message{Conversation: proto.String("per LID")})
	if err != nil {
		t.Fatal(err)
	}
	inboundData(t, s, sess.ID, byLID)
	photo := pngImage(t, 24, 16)
	var img struct{ SandboxSendImage string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $src: String!) { sandboxSendImage(sessionId: $s, from: $f, source: $src, caption: "Foto") }`,
		map[string]any{"s": sess.ID, "f": bob, "src": b64(photo)}, &img)
	inboundData(t, s, sess.ID, img.SandboxSendImage)

	// chats: bob's (the image, last stored) then ada's, one per page.
	first, p1 := chatPage(t, s, sess.ID, 1, nil)
	if len(first) != 1 || !p1.HasNextPage || p1.EndCursor == nil {
		t.Fatalf("first page of chats: %+v %+v", first, p1)
	}
	second, p2 := chatPage(t, s, sess.ID, 1, p1.EndCursor)
	if len(second) != 1 || p2.HasNextPage {
		t.Fatalf("second page of chats: %+v %+v, want the last", second, p2)
	}
	b, a := first[0], second[0]
	if b.JID != bob+"@s.whatsapp.net" || b.UnreadCount != 1 || b.IsGroup || b.LastMessage == nil || b.LastMessage.ID != img.SandboxSendImage || str(b.Phone) != bob {
		t.Errorf("bob's chat: %+v", b)
	}
	if a.JID != ada+"@s.whatsapp.net" || a.UnreadCount != 2 || str(a.Phone) != ada || a.LastMessage == nil || a.LastMessage.ID != byLID || a.LastMessageAt == nil {
		t.Errorf("ada's chat: %+v (unread %d), want 2 unread, last %s", a, a.UnreadCount, byLID)
	}
	if str(a.LID) != info.LID.String() || (adaLID != "" && adaLID != info.LID.String()) {
		t.Errorf("ada's chat LID %q, want %s (the event said %q)", str(a.LID), info.LID, adaLID)
	}

	// chat: by phone, user JID or LID, the same chat.
	for _, arg := range []string{ada, ada + "@s.whatsapp.net", info.LID.String()} {
		var out struct{ Chat *gqlChat }
		s.MustGraphQL(t, apptest.AdminToken, chatQuery, map[string]any{"s": sess.ID, "j": arg}, &out)
		if out.Chat == nil || out.Chat.JID != ada+"@s.whatsapp.net" {
			t.Errorf("chat(%s): %+v", arg, out.Chat)
		}
	}

	// A reaction and an edit show on the message.
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!) { sendReaction(sessionId: $s, messageId: $m, emoji: "👍") { messageId } }`,
		map[string]any{"s": sess.ID, "m": hello}, nil)
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $f: String!, $m: ID!, $t: String!) { sandboxEdit(sessionId: $s, from: $f, messageId: $m, text: $t) }`,
		map[string]any{"s": sess.ID, "f": ada, "m": hello, "t": "Hallo von Ada (bearbeitet)"}, nil)
	testclient.Until(t, 10*time.Second, "the reaction and the edit on the stored message", func() bool {
		ms, _ := messagePage(t, s, sess.ID, ada, 10, nil)
		for _, m := range ms {
			if m.ID == hello {
				return m.Edited && m.Text == "Hallo von Ada (bearbeitet)" && len(m.Reactions) == 1 && m.Reactions[0].Emoji == "👍" && m.Reactions[0].FromMe
			}
		}
		return false
	})

	// messages: newest first, one per page, back to the first.
	var got []gqlStored
	var before *string
	for range 5 {
		ms, p := messagePage(t, s, sess.ID, info.LID.String(), 1, before)
		got = append(got, ms...)
		if !p.HasNextPage {
			break
		}
		before = p.EndCursor
	}
	if len(got) != 3 || got[0].ID != byLID || got[1].ID != mine || got[2].ID != hello {
		t.Fatalf("ada's messages paged back: %+v, want %s, %s, %s", got, byLID, mine, hello)
	}
	for _, m := range []gqlStored{got[0], got[2]} {
		if str(m.SenderPhone) != ada || str(m.SenderLid) != info.LID.String() || m.FromMe {
			t.Errorf("message %s from %s: senderPhone %q senderLid %q, want %s and %s", m.ID, m.Sender, str(m.SenderPhone), str(m.SenderLid), ada, info.LID)
		}
	}
	if got[1].FromMe != true || got[1].Text != "Hallo Ada" || got[1].Status != "sent" || str(got[1].SenderPhone) != phone {
		t.Errorf("the account's message: %+v", got[1])
	}

	// mediaUrl serves the image.
	ms, _ := messagePage(t, s, sess.ID, bob, 5, nil)
	if len(ms) != 1 || ms[0].MediaURL == nil || ms[0].Type != "image" {
		t.Fatalf("bob's messages: %+v", ms)
	}
	media := s.REST(t, http.MethodGet, strings.TrimPrefix(*ms[0].MediaURL, "/api/v1"), apptest.AdminToken, "")
	if media.Status != http.StatusOK || !bytes.Equal(media.Body, photo) {
		t.Errorf("GET %s: %d, %d bytes; want the %d bytes sent", *ms[0].MediaURL, media.Status, len(media.Body), len(photo))
	}

	// contacts: both senders; search by a part of the phone, any case.
	all, _ := contactPage(t, s, sess.ID, 100, nil, nil)
	if len(all) != 2 {
		t.Fatalf("contacts %+v, want ada and bob", all)
	}
	for _, c := range all {
		if c.JID == ada+"@s.whatsapp.net" && (str(c.Phone) != ada || str(c.LID) != info.LID.String()) {
			t.Errorf("ada's contact %+v, want her phone and LID", c)
		}
	}
	search := "0330002"
	if cs, _ := contactPage(t, s, sess.ID, 10, nil, &search); len(cs) != 1 || str(cs[0].Phone) != bob {
		t.Errorf("search %q: %+v, want bob", search, cs)
	}
	c1, cp := contactPage(t, s, sess.ID, 1, nil, nil)
	c2, cp2 := contactPage(t, s, sess.ID, 1, cp.EndCursor, nil)
	if len(c1) != 1 || len(c2) != 1 || !cp.HasNextPage || cp2.HasNextPage || c1[0].JID == c2[0].JID {
		t.Errorf("contacts paged: %+v %+v / %+v %+v", c1, cp, c2, cp2)
	}

	// REST: the same lists, with nextCursor.
	var rc struct {
		Data []struct {
			JID         string
			UnreadCount int
		}
		NextCursor *string
	}
	r := s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat?limit=1", apptest.AdminToken, "")
	r.JSON(t, &rc)
	if r.Status != http.StatusOK || len(rc.Data) != 1 || rc.Data[0].JID != bob+"@s.whatsapp.net" || rc.NextCursor == nil {
		t.Fatalf("GET chat?limit=1: %d %s", r.Status, r.Body)
	}
	r = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat?limit=1&cursor="+url.QueryEscape(*rc.NextCursor), apptest.AdminToken, "")
	r.JSON(t, &rc)
	if r.Status != http.StatusOK || len(rc.Data) != 1 || rc.Data[0].JID != ada+"@s.whatsapp.net" || rc.Data[0].UnreadCount != 2 || rc.NextCursor != nil {
		t.Errorf("GET chat, second page: %d %s", r.Status, r.Body)
	}
	var rm struct {
		Data []struct {
			ID, SenderPhone string
			Edited          bool
			Reactions       []struct{ Emoji string }
		}
		NextCursor *string
	}
	r = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat/"+ada+"/messages?limit=2", apptest.AdminToken, "")
	r.JSON(t, &rm)
	if r.Status != http.StatusOK || len(rm.Data) != 2 || rm.Data[0].ID != byLID || rm.NextCursor == nil {
		t.Fatalf("GET messages?limit=2: %d %s", r.Status, r.Body)
	}
	r = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat/"+ada+"/messages?limit=2&before="+url.QueryEscape(*rm.NextCursor), apptest.AdminToken, "")
	r.JSON(t, &rm)
	if r.Status != http.StatusOK || len(rm.Data) != 1 || rm.Data[0].ID != hello || !rm.Data[0].Edited || len(rm.Data[0].Reactions) != 1 || rm.NextCursor != nil {
		t.Errorf("GET messages, before: %d %s", r.Status, r.Body)
	}
	r = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat/"+info.LID.String(), apptest.AdminToken, "")
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"jid":"`+ada+`@s.whatsapp.net"`) {
		t.Errorf("GET chat by LID: %d %s", r.Status, r.Body)
	}
	r = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/contact?search=ADA", apptest.AdminToken, "")
	if r.Status != http.StatusOK {
		t.Errorf("GET contact?search: %d %s", r.Status, r.Body)
	}

	// Bad input names the field.
	for _, tc := range []struct{ path, field string }{
		{"/chat?limit=0", "limit"},
		{"/chat?limit=101", "limit"},
		{"/chat?cursor=nonsense", "cursor"},
		{"/chat?archived=maybe", "archived"},
		{"/chat/12ab", "chat"},
		{"/chat/12ab/messages", "chat"},
		{"/chat/" + ada + "/messages?before=nonsense", "before"},
		{"/contact?limit=500", "limit"},
	} {
		r := s.REST(t, http.MethodGet, "/session/"+sess.ID+tc.path, apptest.AdminToken, "")
		if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Message(t), tc.field) {
			t.Errorf("GET %s: %d %q, want 400 naming %s", tc.path, r.Status, r.Message(t), tc.field)
		}
	}
	if r := s.REST(t, http.MethodGet, "/session/"+sess.ID+"/chat/4915550339999", apptest.AdminToken, ""); r.Status != http.StatusNotFound {
		t.Errorf("GET an unknown chat: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ query, field string }{
		{`query($s: ID!) { messages(sessionId: $s, chat: "12ab") { pageInfo { hasNextPage } } }`, "chat"},
		{`query($s: ID!) { chat(sessionId: $s, jid: "x@y@z") { jid } }`, "jid"},
		{`query($s: ID!) { chats(sessionId: $s, first: 0) { pageInfo { hasNextPage } } }`, "first"},
	} {
		res := s.GraphQL(t, apptest.AdminToken, tc.query, map[string]any{"s": sess.ID})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != tc.field {
			t.Errorf("%s: %+v, want BAD_USER_INPUT on %s", tc.query, res.Errors, tc.field)
		}
	}

	// Stored: the same answers while the session is disconnected.
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { disconnectSession(id: $s) { id } }`, map[string]any{"s": sess.ID}, nil)
	s.WaitStatus(t, sess.ID, "DISCONNECTED", nil)
	if cs, _ := chatPage(t, s, sess.ID, 10, nil); len(cs) != 2 || cs[1].UnreadCount != 2 {
		t.Errorf("chats while disconnected: %+v", cs)
	}
	if ms, _ := messagePage(t, s, sess.ID, ada, 10, nil); len(ms) != 3 {
		t.Errorf("messages while disconnected: %d", len(ms))
	}
}

// TestStoredChatState: what the phone does to chats through app state
// (archive, pin, mute, mark read, an address book entry) shows in chats,
// chat and contacts; markRead here makes the chat's unreadCount 0.
func TestStoredChatState(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ada, bob = apptest.LinkedPhone, "4915550340001", "4915550340002"
	for _, from := range []string{ada, bob} {
		id, err := n.SendText(from, phone, "Hallo")
		if err != nil {
			t.Fatal(err)
		}
		inboundData(t, s, sess.ID, id)
	}
	adaJID, bobJID := userOf(t, ada), userOf(t, bob)
	until := time.Now().Add(8 * time.Hour).Truncate(time.Millisecond)
	for _, step := range []func() error{
		func() error { return n.ArchiveChat(phone, adaJID, true) },
		func() error { return n.PinChat(phone, bobJID, true) },
		func() error { return n.MuteChat(phone, bobJID, true, until) },
		func() error { return n.MarkChatRead(phone, bobJID, true) },
		func() error { return n.EditContact(phone, ada, "Ada Lovelace", "Ada") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	chat := func(number string) gqlChat {
		var out struct{ Chat *gqlChat }
		s.MustGraphQL(t, apptest.AdminToken, chatQuery, map[string]any{"s": sess.ID, "j": number}, &out)
		if out.Chat == nil {
			t.Fatalf("no chat %s", number)
		}
		return *out.Chat
	}
	testclient.Until(t, 10*time.Second, "the phone's app state in the chats", func() bool {
		a, b := chat(ada), chat(bob)
		return a.Archived && a.Name == "Ada Lovelace" && b.Pinned && b.MutedUntil != nil && b.UnreadCount == 0
	})
	if b := chat(bob); !b.MutedUntil.Equal(until) || b.Archived {
		t.Errorf("bob's chat: muted until %v (want %v), archived %v", b.MutedUntil, until, b.Archived)
	}
	for _, tc := range []struct {
		archived bool
		want     string
	}{{true, ada}, {false, bob}} {
		var out struct {
			Chats struct{ Edges []struct{ Node gqlChat } }
		}
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $a: Boolean) { chats(sessionId: $s, archived: $a) { edges { node { jid } } } }`,
			map[string]any{"s": sess.ID, "a": tc.archived}, &out)
		if len(out.Chats.Edges) != 1 || out.Chats.Edges[0].Node.JID != tc.want+"@s.whatsapp.net" {
			t.Errorf("chats(archived: %v): %+v, want %s alone", tc.archived, out.Chats.Edges, tc.want)
		}
	}
	search := "LOVELACE"
	if cs, _ := contactPage(t, s, sess.ID, 10, nil, &search); len(cs) != 1 || str(cs[0].Name) != "Ada Lovelace" || str(cs[0].Phone) != ada {
		t.Errorf("contacts(search: %q): %+v, want Ada Lovelace", search, cs)
	}

	// markRead here: unread 0.
	if a := chat(ada); a.UnreadCount != 1 {
		t.Errorf("ada's chat: unread %d, want 1", a.UnreadCount)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!) { markRead(sessionId: $s, chat: $c) }`, map[string]any{"s": sess.ID, "c": ada}, nil)
	testclient.Until(t, 10*time.Second, "ada's chat read", func() bool { return chat(ada).UnreadCount == 0 })
}

// TestStoredHistory: a history sync from the phone makes its chats (name,
// unread count as the phone says) and stores its messages: chats and
// messages show what the gateway never saw live, its push names are
// contacts.
func TestStoredHistory(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ute, paul = apptest.LinkedPhone, "4915550350001", "4915550350002"
	when := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	err := n.SendHistory(phone, wafake.History{
		Chats: []wafake.HistoryChat{{JID: userOf(t, ute), Name: "Ute", Unread: 1, Messages: []wafake.HistoryMessage{
			{ID: "3EB0STOREDHIST01", Text: "Habt ihr morgen noch Tulpen?", Time: when},
			{ID: "3EB0STOREDHIST02", FromMe: true, Text: "Ja, bis 18 Uhr", Time: when.Add(time.Minute)},
		}}},
		PushNames: map[string]string{paul: "Paul"},
	})
	if err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "the history's chat with its messages", func() bool {
		ms, _ := messagePage(t, s, sess.ID, ute, 10, nil)
		return len(ms) == 2
	})
	ms, _ := messagePage(t, s, sess.ID, ute, 10, nil)
	if ms[0].ID != "3EB0STOREDHIST02" || !ms[0].FromMe || ms[1].ID != "3EB0STOREDHIST01" || ms[1].Text != "Habt ihr morgen noch Tulpen?" || str(ms[1].SenderPhone) != ute {
		t.Errorf("the history's messages: %+v", ms)
	}
	// The chat store applies a message to its chat after the message
	// store kept it: the chat catches up a moment after the messages show.
	var out struct{ Chat *gqlChat }
	testclient.Until(t, 10*time.Second, "the history's chat with its newest message", func() bool {
		s.MustGraphQL(t, apptest.AdminToken, chatQuery, map[string]any{"s": sess.ID, "j": ute}, &out)
		return out.Chat != nil && out.Chat.LastMessage != nil && out.Chat.LastMessage.ID == "3EB0STOREDHIST02"
	})
	if c := out.Chat; c.Name != "Ute" || c.UnreadCount != 1 || c.LastMessageAt == nil || !c.LastMessageAt.Equal(when.Add(time.Minute)) {
		t.Errorf("the history's chat: %+v (last message %+v), want Ute's, 1 unread, last at %v", c, *c.LastMessage, when.Add(time.Minute))
	}
	search := "paul"
	testclient.Until(t, 10*time.Second, "the history's push name as a contact", func() bool {
		cs, _ := contactPage(t, s, sess.ID, 10, nil, &search)
		return len(cs) == 1 && str(cs[0].Phone) == paul && str(cs[0].PushName) == "Paul"
	})
}
