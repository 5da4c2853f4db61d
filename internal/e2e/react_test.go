package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// phoneMessage waits for the phone of phone to have received a message
// that ok accepts, and returns it.
func phoneMessage(t *testing.T, s *apptest.Server, phone, what string, ok func(inboxMessage) bool) inboxMessage {
	t.Helper()
	var found inboxMessage
	testclient.Until(t, 10*time.Second, what, func() bool {
		for _, m := range inbox(t, s, phone) {
			if ok(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

type storedReactions struct {
	Message struct {
		Text      *string
		Caption   *string
		Reactions []struct {
			Emoji, Sender string
			FromMe        bool
		}
	}
}

func storedWithReactions(t *testing.T, s *apptest.Server, sessionID, id string) storedReactions {
	t.Helper()
	var out storedReactions
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { text caption reactions { emoji sender fromMe } } }`,
		map[string]any{"s": sessionID, "m": id}, &out)
	return out
}

// TestSendReaction: a reaction to a message the contact sent reaches the
// contact's phone as a reaction to that message, decrypted; the stored
// message carries it, and messages.reaction (fromMe) is the event; an
// empty emoji takes it back on the phone and in the store. A reaction to
// the account's own message shows on the phone's copy of it. Bad input is
// refused naming the field.
func TestSendReaction(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, contact = apptest.LinkedPhone, "4915550260002"
	theirs, err := n.SendText(contact, phone, "Wie geht's?")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, theirs)

	var res struct{ SendReaction struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!) { sendReaction(sessionId: $s, messageId: $m, emoji: "👍") { messageId } }`,
		map[string]any{"s": sess.ID, "m": theirs}, &res)
	got := phoneMessage(t, s, contact, "the reaction on the contact's phone", func(m inboxMessage) bool { return m.ID == res.SendReaction.MessageID })
	if got.Type != "reaction" || str(got.Text) != "👍" || str(got.QuotedID) != theirs || got.From != phone {
		t.Errorf("the contact's phone decrypted %+v, want a 👍 reaction to %s from %s", got, theirs, phone)
	}
	testclient.Until(t, 5*time.Second, "the stored message carries the reaction", func() bool {
		r := storedWithReactions(t, s, sess.ID, theirs).Message.Reactions
		return len(r) == 1 && r[0].Emoji == "👍" && r[0].FromMe
	})
	var reacted bool
	for _, d := range eventData(t, s, sess.ID, "MESSAGES_REACTION") {
		reacted = reacted || (d["id"] == theirs && d["fromMe"] == true && d["reaction"].(map[string]any)["text"] == "👍")
	}
	if !reacted {
		t.Error("no messages.reaction with fromMe true for the reaction")
	}

	// Taken back over REST.
	r := s.REST(t, "POST", "/session/"+sess.ID+"/message/"+theirs+"/reaction", apptest.AdminToken, `{"emoji":""}`)
	if r.Status != http.StatusOK {
		t.Fatalf("REST reaction: %d %s", r.Status, r.Body)
	}
	var back struct{ Data struct{ MessageID string } }
	r.JSON(t, &back)
	got = phoneMessage(t, s, contact, "the taken-back reaction", func(m inboxMessage) bool { return m.ID == back.Data.MessageID })
	if got.Type != "reaction" || str(got.Text) != "" || str(got.QuotedID) != theirs {
		t.Errorf("the contact's phone decrypted %+v, want the reaction taken back", got)
	}
	testclient.Until(t, 5*time.Second, "the stored message without reactions", func() bool {
		return len(storedWithReactions(t, s, sess.ID, theirs).Message.Reactions) == 0
	})

	// On the account's own message, as the phone shows it.
	mine := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "Gut, danke"})
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!) { sendReaction(sessionId: $s, messageId: $m, emoji: "❤️") { messageId } }`,
		map[string]any{"s": sess.ID, "m": mine}, &res)
	got = phoneMessage(t, s, contact, "the phone's copy of the message with the reaction", func(m inboxMessage) bool {
		return m.ID == mine && len(m.Reactions) == 1
	})
	if got.Reactions[0].Emoji != "❤️" || got.Reactions[0].From != phone {
		t.Errorf("reactions on the phone %+v, want ❤️ from %s", got.Reactions, phone)
	}

	for _, tt := range []struct{ body, want string }{
		{`{"emoji":"ok"}`, "emoji must be one emoji"},
		{`{"emoji":"👍 👍"}`, "emoji must be one emoji"},
		{`{"emoji":"👍👍"}`, "emoji must be one emoji"},
		{`{}`, "emoji is required"},
	} {
		r := s.REST(t, "POST", "/session/"+sess.ID+"/message/"+theirs+"/reaction", apptest.AdminToken, tt.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), tt.want) {
			t.Errorf("reaction %s: %d %q, want 400 saying %q", tt.body, r.Status, r.Message(t), tt.want)
		}
	}
	if r := s.REST(t, "POST", "/session/"+sess.ID+"/message/3EB0NOSUCH/reaction", apptest.AdminToken, `{"emoji":"👍"}`); r.Status != http.StatusNotFound {
		t.Errorf("reaction to an unknown message: %d %s", r.Status, r.Body)
	}
}

// TestEditMessage: an edit of a text this account sent reaches the
// contact's phone, which shows the message edited with the new text; so
// does an image's new caption; the stored message changes and
// messages.update (edited) is the event. WhatsApp's 15 minutes are
// checked first (a message made older is refused, nothing sent), and a
// received message cannot be edited.
func TestEditMessage(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, contact = apptest.LinkedPhone, "4915550260012"
	id := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "Treffen um 10"})
	var res struct{ EditMessage struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!) { editMessage(sessionId: $s, messageId: $m, text: "Treffen um 11") { messageId } }`,
		map[string]any{"s": sess.ID, "m": id}, &res)
	got := phoneMessage(t, s, contact, "the edited message on the contact's phone", func(m inboxMessage) bool { return m.ID == id && m.Edited })
	if str(got.Text) != "Treffen um 11" {
		t.Errorf("the contact's phone shows %q, want the edit", str(got.Text))
	}
	testclient.Until(t, 5*time.Second, "the stored text edited", func() bool {
		return str(storedWithReactions(t, s, sess.ID, id).Message.Text) == "Treffen um 11"
	})
	var edited bool
	for _, d := range eventData(t, s, sess.ID, "MESSAGES_UPDATE") {
		edited = edited || (d["id"] == id && d["status"] == "edited" && d["text"] == "Treffen um 11" && d["messageId"] == res.EditMessage.MessageID)
	}
	if !edited {
		t.Error("no messages.update edited with the new text")
	}

	// A caption, over REST.
	img := restSend(t, s, sess.ID, "image", map[string]any{"number": contact, "source": b64(pngImage(t, 8, 8)), "caption": "Angebot"})
	r := s.REST(t, "PUT", "/session/"+sess.ID+"/message/"+img, apptest.AdminToken, `{"text":"Angebot bis Freitag"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("REST edit: %d %s", r.Status, r.Body)
	}
	got = phoneMessage(t, s, contact, "the image's new caption", func(m inboxMessage) bool { return m.ID == img && m.Edited })
	if str(got.Caption) != "Angebot bis Freitag" {
		t.Errorf("caption on the phone %q", str(got.Caption))
	}

	// Older than WhatsApp's window: refused before anything is sent.
	late := restSend(t, s, sess.ID, "text", map[string]any{"number": contact, "text": "alt"})
	db, postgres := s.RawDB(t, "wagraph.db")
	q := `UPDATE messages SET timestamp = ? WHERE message_id = ?`
	if postgres {
		q = `UPDATE messages SET timestamp = $1 WHERE message_id = $2`
	}
	if _, err := db.Exec(q, time.Now().Add(-16*time.Minute).UTC(), late); err != nil {
		t.Fatal(err)
	}
	before := len(inbox(t, s, contact))
	r = s.REST(t, "PUT", "/session/"+sess.ID+"/message/"+late, apptest.AdminToken, `{"text":"neu"}`)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Message(t), "too old to edit") {
		t.Errorf("edit after 16 minutes: %d %q, want 422 too old to edit", r.Status, r.Message(t))
	}
	theirs, err := n.SendText(contact, phone, "Von mir")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, theirs)
	r = s.REST(t, "PUT", "/session/"+sess.ID+"/message/"+theirs, apptest.AdminToken, `{"text":"gefälscht"}`)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Message(t), "only its own messages can be edited") {
		t.Errorf("edit of a received message: %d %q", r.Status, r.Message(t))
	}
	if r := s.REST(t, "PUT", "/session/"+sess.ID+"/message/"+id, apptest.AdminToken, `{"text":"  "}`); r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), "text must not be empty") {
		t.Errorf("an empty edit: %d %q", r.Status, r.Message(t))
	}
	time.Sleep(300 * time.Millisecond)
	if after := len(inbox(t, s, contact)); after != before {
		t.Errorf("refused edits reached the phone: %d messages, want %d", after, before)
	}
}

// TestViewOnce: an image, a video and a voice note sent with viewOnce
// reach the phone as view-once media (what it decrypted); without it, an
// image is an ordinary one.
func TestViewOnce(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550260022"
	once := restSend(t, s, sess.ID, "image", map[string]any{"number": contact, "source": b64(pngImage(t, 8, 8)), "viewOnce": true})
	video := restSend(t, s, sess.ID, "video", map[string]any{"number": contact, "source": b64(mp4Video(t)), "viewOnce": true})
	plain := restSend(t, s, sess.ID, "image", map[string]any{"number": contact, "source": b64(pngImage(t, 8, 8))})
	var stored struct{ Message struct{ Type string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { type } }`,
		map[string]any{"s": sess.ID, "m": once}, &stored)
	if stored.Message.Type != "image" {
		t.Errorf("the view-once image is stored as %q, want image", stored.Message.Type)
	}
	for id, want := range map[string]bool{once: true, video: true, plain: false} {
		if got := received(t, s, contact, id); got.ViewOnce != want {
			t.Errorf("message %s (%s): viewOnce %v on the phone, want %v", id, got.Type, got.ViewOnce, want)
		}
	}
}
