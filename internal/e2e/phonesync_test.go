package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// historySets are the ids of the messages of the session's
// messaging-history.set events of syncType (and, when chat is not "",
// that chat), one list per event, in the log's order.
func historySets(t *testing.T, s *apptest.Server, sessionID, syncType, chat string) [][]string {
	t.Helper()
	var out [][]string
	for _, d := range eventData(t, s, sessionID, "MESSAGING_HISTORY_SET") {
		if d["syncType"] != syncType || (chat != "" && d["chat"] != chat) {
			continue
		}
		ids := []string{}
		for _, m := range d["messages"].([]any) {
			ids = append(ids, m.(map[string]any)["id"].(string))
		}
		out = append(out, ids)
	}
	return out
}

// waitHistorySets waits until the session's log holds n history sets of
// syncType for chat, and returns them.
func waitHistorySets(t *testing.T, s *apptest.Server, sessionID, syncType, chat string, n int) [][]string {
	t.Helper()
	var sets [][]string
	testclient.Until(t, 10*time.Second, "messaging-history.set "+syncType+" in the log", func() bool {
		sets = historySets(t, s, sessionID, syncType, chat)
		return len(sets) >= n
	})
	if len(sets) != n {
		t.Fatalf("%d messaging-history.set %s of %s, want %d: %v", len(sets), syncType, chat, n, sets)
	}
	return sets
}

// historyStored is the stored message id of the session, as message(id)
// reads it; nil when not stored.
func historyStored(t *testing.T, s *apptest.Server, sessionID, id string) map[string]any {
	t.Helper()
	var out struct{ Message map[string]any }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $id: ID!) { message(sessionId: $s, id: $id) { id chat fromMe text timestamp status } }`,
		map[string]any{"s": sessionID, "id": id}, &out)
	return out.Message
}

// requestHistory asks for older messages of chat through GraphQL.
func requestHistory(t *testing.T, s *apptest.Server, sessionID, chat string, count any) {
	t.Helper()
	var out struct{ RequestHistory bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $c: String!, $n: Int) { requestHistory(sessionId: $s, chat: $c, count: $n) }`,
		map[string]any{"s": sessionID, "c": chat, "n": count}, &out)
	if !out.RequestHistory {
		t.Fatal("requestHistory answered false")
	}
}

// TestLinkTakesThePhonesState: linking gives the session what the phone
// holds, as a real phone does: its name (sendPresence AVAILABLE works at
// once, where it answered 409), the chats it archived, pinned and muted
// and its address book (chats.update, contacts.upsert), and a history
// sync with each chat's most recent message only; the older ones come
// with requestHistory, stored, and then an empty answer.
func TestLinkTakesThePhonesState(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	n := s.Network(t)
	const phone, jana, shop = "4915550340001", "4915550340002", "4915550340003"
	when := time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC)
	older := []wafake.HistoryMessage{
		{ID: "3EB0LINK01", Text: "Guten Morgen", Time: when},
		{ID: "3EB0LINK02", FromMe: true, Text: "Morgen!", Time: when.Add(time.Minute)},
		{ID: "3EB0LINK03", Text: "Bis später", Time: when.Add(2 * time.Minute)},
	}
	if err := n.AddHistory(phone, userOf(t, jana), older...); err != nil {
		t.Fatal(err)
	}
	if err := n.AddHistory(phone, userOf(t, shop), wafake.HistoryMessage{ID: "3EB0LINK04", Text: "Ihre Bestellung", Time: when.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(8 * time.Hour).Truncate(time.Second).UTC()
	for _, err := range []error{
		n.ArchiveChat(phone, userOf(t, jana), true),
		n.PinChat(phone, userOf(t, shop), true),
		n.MuteChat(phone, userOf(t, shop), true, until),
		n.EditContact(phone, jana, "Jana Beispiel", "Jana"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	sess := s.LinkSession(t, phone)
	var presence struct{ SendPresence bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { sendPresence(sessionId: $s, state: AVAILABLE) }`, map[string]any{"s": sess.ID}, &presence)
	testclient.Until(t, 5*time.Second, "the account shows itself available", func() bool {
		p := networkAccount(t, s, phone).Presence
		return p != nil && *p == "available"
	})
	s.WaitStatus(t, sess.ID, "CONNECTED", func(m map[string]any) bool { return m["pushName"] == "Contact "+phone })

	testclient.Until(t, 10*time.Second, "the phone's chat state as chats.update", func() bool {
		archived := slices.ContainsFunc(chatUpdates(t, s, sess.ID, userJID(jana)), func(d map[string]any) bool { return d["archived"] == true })
		pinned, muted := false, false
		for _, d := range chatUpdates(t, s, sess.ID, userJID(shop)) {
			pinned = pinned || d["pinned"] == true
			muted = muted || (d["muted"] == true && d["muteUntil"] == until.Format("2006-01-02T15:04:05.000Z"))
		}
		return archived && pinned && muted
	})
	testclient.Until(t, 10*time.Second, "the phone's address book as contacts.upsert", func() bool {
		return slices.ContainsFunc(eventData(t, s, sess.ID, "CONTACTS_UPSERT"), func(d map[string]any) bool {
			return d["id"] == userJID(jana) && d["fullName"] == "Jana Beispiel" && d["firstName"] == "Jana"
		})
	})

	// At link, each chat's most recent message only, most recent chat first.
	if got := waitHistorySets(t, s, sess.ID, "INITIAL_BOOTSTRAP", "", 1)[0]; !slices.Equal(got, []string{"3EB0LINK04", "3EB0LINK03"}) {
		t.Errorf("history at link %v, want the most recent message of each chat", got)
	}
	if m := historyStored(t, s, sess.ID, "3EB0LINK03"); m == nil || m["text"] != "Bis später" || m["chat"] != userJID(jana) {
		t.Errorf("stored message of the history at link %v", m)
	}
	if m := historyStored(t, s, sess.ID, "3EB0LINK01"); m != nil {
		t.Fatalf("message %v stored before it was asked for", m)
	}

	// Older ones on request: before the oldest stored (3EB0LINK03).
	requestHistory(t, s, sess.ID, jana, nil)
	if got := waitHistorySets(t, s, sess.ID, "ON_DEMAND", userJID(jana), 1)[0]; !slices.Equal(got, []string{"3EB0LINK01", "3EB0LINK02"}) {
		t.Errorf("history on request %v, want 3EB0LINK01, 3EB0LINK02", got)
	}
	for _, m := range older[:2] {
		got := historyStored(t, s, sess.ID, m.ID)
		if got == nil || got["text"] != m.Text || got["fromMe"] != m.FromMe || got["timestamp"] != m.Time.Format("2006-01-02T15:04:05.000Z") {
			t.Errorf("stored %s: %v, want %+v", m.ID, got, m)
		}
	}
	// Nothing older: an empty answer for the chat.
	requestHistory(t, s, sess.ID, jana, 10)
	if got := waitHistorySets(t, s, sess.ID, "ON_DEMAND", userJID(jana), 2)[1]; len(got) != 0 {
		t.Errorf("history on request with nothing older %v, want none", got)
	}
	apptest.Settle(t, n, sess)
}

// TestRequestHistory: requestHistory (REST) asks the phone for messages
// of a chat older than the oldest stored, count at a time: the phone's
// messages the gateway never saw arrive as messaging-history.set and are
// stored; when the phone holds nothing older the answer is empty. Bad
// input is refused naming the field; later changes on the phone (pin,
// mark read) arrive as chats.update.
func TestRequestHistory(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, contact = apptest.LinkedPhone, "4915550340011"
	live, err := n.SendText(contact, phone, "Noch da?")
	if err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "the live message stored", func() bool { return historyStored(t, s, sess.ID, live) != nil })
	when := time.Now().Add(-48 * time.Hour).Truncate(time.Second).UTC()
	var unseen []wafake.HistoryMessage
	for i, text := range []string{"eins", "zwei", "drei"} {
		unseen = append(unseen, wafake.HistoryMessage{ID: "3EB0UNSEEN" + text, FromMe: i == 1, Text: text, Time: when.Add(time.Duration(i) * time.Minute)})
	}
	if err := n.AddHistory(phone, userOf(t, contact), unseen...); err != nil {
		t.Fatal(err)
	}

	path := "/session/" + sess.ID + "/chat/" + contact + "/history"
	for _, tt := range []struct {
		body, want string
	}{
		{`{"count":0}`, "count"},
		{`{"count":101}`, "count"},
		{`{"count":"5"}`, "count"},
	} {
		res := s.REST(t, "POST", path, apptest.AdminToken, tt.body)
		if res.Status != 400 || !strings.Contains(res.Message(t), tt.want) {
			t.Errorf("POST %s %s: %d %s, want 400 naming %s", path, tt.body, res.Status, res.Body, tt.want)
		}
	}
	if r := s.GraphQL(t, apptest.AdminToken, `mutation($s: ID!) { requestHistory(sessionId: $s, chat: "0155 5034", count: 5) }`, map[string]any{"s": sess.ID}); len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "chat") {
		t.Errorf("requestHistory with a bad chat: %v, want BAD_USER_INPUT naming chat", r.Errors)
	}

	for i, want := range [][]string{
		{"3EB0UNSEENzwei", "3EB0UNSEENdrei"},
		{"3EB0UNSEENeins"},
		{},
	} {
		if res := s.REST(t, "POST", path, apptest.AdminToken, `{"count":2}`); res.Status != 200 {
			t.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
		}
		got := waitHistorySets(t, s, sess.ID, "ON_DEMAND", userJID(contact), i+1)[i]
		if !slices.Equal(got, want) {
			t.Errorf("answer %d: %v, want %v", i+1, got, want)
		}
		for _, id := range want {
			if historyStored(t, s, sess.ID, id) == nil {
				t.Errorf("message %s of the answer not stored", id)
			}
		}
	}

	// The phone pins the chat and marks it read later: chats.update.
	if err := n.PinChat(phone, userOf(t, contact), true); err != nil {
		t.Fatal(err)
	}
	if err := n.MarkChatRead(phone, userOf(t, contact), true); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "pin and read as chats.update", func() bool {
		pinned, read := false, false
		for _, d := range chatUpdates(t, s, sess.ID, userJID(contact)) {
			pinned = pinned || d["pinned"] == true
			read = read || (d["read"] == true && d["unreadCount"] == float64(0))
		}
		return pinned && read
	})
	apptest.Settle(t, n, sess)
}
