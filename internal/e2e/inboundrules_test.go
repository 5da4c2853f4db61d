package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// What arrives from WhatsApp is held to the rules WhatsApp's own apps
// apply (issue 31, findings 5, 6 and 7): edits within 15 minutes by their
// own time, view-once kept as view-once, reactions in their message's
// chat, polls within WhatsApp's bounds.

// editUpdates is the data of the messages.update events about message id
// that are an edit, applied or refused, oldest first.
func editUpdates(t *testing.T, s *apptest.Server, sessionID, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range eventData(t, s, sessionID, "MESSAGES_UPDATE") {
		if d["id"] == id && (d["status"] == "edited" || d["status"] == "edit-refused") {
			out = append(out, d)
		}
	}
	return out
}

// TestLateEditRefused reproduces issue 31 finding 5: a contact's edit
// stamped 15.1, 18.3 and 21.2 minutes after its message (sandboxEdit's
// sentAt, the edit's own time) rewrote the stored text. Now each is
// edit-refused, saying why, and the text stays; an edit within the window
// is applied. A sentAt the sandbox cannot stand for is refused naming it.
func TestLateEditRefused(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, ana = apptest.LinkedPhone, "4915550311002"
	id, err := n.SendText(ana, me, "Treffen um 10")
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, id)
	var stored struct{ Message struct{ Timestamp time.Time } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { timestamp } }`,
		map[string]any{"s": sess.ID, "m": id}, &stored)
	sent := stored.Message.Timestamp

	const edit = `mutation($s: ID!, $f: String!, $m: ID!, $t: String!, $at: Time) { sandboxEdit(sessionId: $s, from: $f, messageId: $m, text: $t, sentAt: $at) }`
	steps := []struct {
		after  time.Duration
		text   string
		status string
		stored string
	}{
		{15*time.Minute + 6*time.Second, "Treffen um 11", "edit-refused", "Treffen um 10"},
		{18*time.Minute + 18*time.Second, "Treffen um 12", "edit-refused", "Treffen um 10"},
		{21*time.Minute + 12*time.Second, "Treffen um 13", "edit-refused", "Treffen um 10"},
		{14 * time.Minute, "Treffen um 14", "edited", "Treffen um 14"},
		{15*time.Minute + 30*time.Second, "Treffen um 15", "edit-refused", "Treffen um 14"},
	}
	for i, st := range steps {
		t.Run(fmt.Sprintf("%s after", st.after), func(t *testing.T) {
			s.MustGraphQL(t, apptest.AdminToken, edit, map[string]any{
				"s": sess.ID, "f": ana, "m": id, "t": st.text, "at": sent.Add(st.after).UTC().Format(time.RFC3339),
			}, nil)
			var upd map[string]any
			testclient.Until(t, 15*time.Second, "the edit's messages.update", func() bool {
				if u := editUpdates(t, s, sess.ID, id); len(u) > i {
					upd = u[i]
					return true
				}
				return false
			})
			if upd["status"] != st.status || upd["sender"] != userJID(ana) {
				t.Errorf("messages.update %v, want status %s by %s", upd, st.status, userJID(ana))
			}
			if ts, _ := time.Parse(time.RFC3339, str2(upd["timestamp"])); !ts.Equal(sent.Add(st.after)) {
				t.Errorf("messages.update timestamp %v, want the edit's own time %s", upd["timestamp"], sent.Add(st.after).UTC())
			}
			if st.status == "edit-refused" {
				if e := str2(upd["error"]); !strings.Contains(e, "later than WhatsApp's 15m0s window") || upd["text"] != nil {
					t.Errorf("a late edit's messages.update says %q (text %v), want why, without the text", e, upd["text"])
				}
			} else if upd["error"] != nil || upd["text"] != st.text {
				t.Errorf("an edit within the window: %v", upd)
			}
			if got := storedMsgOf(t, s, sess.ID, id).Text; got != st.stored {
				t.Errorf("stored text %q, want %q", got, st.stored)
			}
		})
	}

	res := s.GraphQL(t, apptest.AdminToken, edit, map[string]any{
		"s": sess.ID, "f": ana, "m": id, "t": "zu spät", "at": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339),
	})
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "sentAt must be within") {
		t.Errorf("sandboxEdit two days ahead: %+v, want an error naming sentAt", res.Errors)
	}
}

// viewOnceImage is an image as phones send one to be opened once: flagged
// and wrapped.
func viewOnceImage(t *testing.T, n *wafake.Network, photo []byte) *waE2E.Message {
	t.Helper()
	up, err := n.Upload(photo, whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	return &waE2E.Message{ViewOnceMessageV2: &waE2E.FutureProofMessage{Message: &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
		Mimetype: proto.String("image/png"), MediaKeyTimestamp: proto.Int64(time.Now().Unix()), ViewOnce: proto.Bool(true),
	}}}}
}

// TestViewOnceReceived reproduces issue 31 finding 6: a contact's
// view-once photo was stored, served on every request and forwardable as
// an ordinary image, and its event had no view-once flag. Now the event
// and the stored record (GraphQL and REST) say viewOnce, a forward is
// refused naming the rule, and the media is served once: the first
// successful download is the view, every later request is 404. An
// ordinary image beside it is served as often as asked.
func TestViewOnceReceived(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, ana, ben = apptest.LinkedPhone, "4915550311012", "4915550311013"
	if _, err := n.SendText(ben, me, "hallo"); err != nil { // Ben's phone, to look into
		t.Fatal(err)
	}
	photo := pngImage(t, 24, 16)
	once, err := n.SendMessage(ana, me, viewOnceImage(t, n, photo))
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, once)
	plain, err := n.SendImage(ana, me, photo, "image/png", "")
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, plain)

	for _, tt := range []struct {
		id   string
		want bool
	}{{once, true}, {plain, false}} {
		var d map[string]any
		testclient.Until(t, 10*time.Second, "the inbound-message.upsert of "+tt.id, func() bool {
			for _, x := range eventData(t, s, sess.ID, "INBOUND_MESSAGE_UPSERT") {
				if x["id"] == tt.id {
					d = x
				}
			}
			return d != nil
		})
		if d["viewOnce"] != tt.want || d["type"] != "image" {
			t.Errorf("inbound-message.upsert of %s: type %v viewOnce %v, want an image with viewOnce %v", tt.id, d["type"], d["viewOnce"], tt.want)
		}
		var q struct{ Message struct{ ViewOnce bool } }
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { viewOnce } }`,
			map[string]any{"s": sess.ID, "m": tt.id}, &q)
		r := s.REST(t, http.MethodGet, "/session/"+sess.ID+"/message/"+tt.id, apptest.AdminToken, "")
		var env struct{ Data map[string]any }
		r.JSON(t, &env)
		if q.Message.ViewOnce != tt.want || env.Data["viewOnce"] != tt.want {
			t.Errorf("stored %s: GraphQL viewOnce %v, REST %v (%s), want %v", tt.id, q.Message.ViewOnce, env.Data["viewOnce"], r.Body, tt.want)
		}
	}

	forward := func(t *testing.T) {
		t.Helper()
		r := s.REST(t, http.MethodPost, "/session/"+sess.ID+"/message/"+once+"/forward", apptest.AdminToken, `{"number":"`+ben+`"}`)
		if msg := r.Message(t); r.Status != http.StatusBadRequest || !strings.Contains(msg, "messageId") || !strings.Contains(msg, "view-once") {
			t.Errorf("forwarding the view-once image: %d %q, want 400 naming messageId and the view-once rule", r.Status, msg)
		}
	}
	forward(t)

	media := func(id string) apptest.Response {
		return s.REST(t, http.MethodGet, "/session/"+sess.ID+"/message/"+id+"/media", apptest.AdminToken, "")
	}
	if r := media(once); r.Status != http.StatusOK || !bytes.Equal(r.Body, photo) {
		t.Fatalf("the first download of the view-once image: %d (%d bytes), want 200 with the photo", r.Status, len(r.Body))
	}
	for range 2 {
		if r := media(once); r.Status != http.StatusNotFound || !strings.Contains(r.Message(t), "view-once") {
			t.Errorf("a later download of the view-once image: %d %s, want 404 saying it was viewed", r.Status, r.Body)
		}
	}
	for range 2 {
		if r := media(plain); r.Status != http.StatusOK || !bytes.Equal(r.Body, photo) {
			t.Errorf("the ordinary image: %d (%d bytes), want 200 with the photo every time", r.Status, len(r.Body))
		}
	}
	forward(t)
	time.Sleep(300 * time.Millisecond)
	if got := inbox(t, s, ben); len(got) != 0 {
		t.Errorf("Ben's phone received %+v, want nothing forwarded", got)
	}
}

// TestReactionFromAnotherChat reproduces the reaction of issue 31 finding
// 7: a contact reacting, in its own chat, to a message of another chat by
// its id was published as an ordinary messages.reaction. Now it is
// refused as a forged edit is: messages.update reaction-refused saying
// why and naming who sent it, no messages.reaction, the message without
// the reaction. A reaction in the message's own chat is applied.
func TestReactionFromAnotherChat(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, ana, ben, host = apptest.LinkedPhone, "4915550311022", "4915550311023", "4915550311024"
	group, err := n.CreateGroup(host, "Reaktionen", me, ana, ben)
	if err != nil {
		t.Fatal(err)
	}
	anas, err := n.SendText(ana, me, "von Ana")
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, anas)
	bens, err := n.SendText(ben, me, "von Ben")
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, bens)
	inGroup, err := n.SendGroupMessage(ana, group, &waE2E.Message{Conversation: proto.String("von Ana, in der Gruppe")}, false)
	if err != nil {
		t.Fatal(err)
	}
	waitInStore(t, s, sess.ID, inGroup)

	steps := []struct {
		name    string
		target  string
		refused bool
	}{
		{"Ben reacts in his chat to Ana's direct message", anas, true},
		{"Ben reacts in his chat to Ana's group message", inGroup, true},
		{"Ben reacts to his own message", bens, false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rid, err := n.SendReaction(ben, me, st.target, "💩")
			if err != nil {
				t.Fatal(err)
			}
			waitInStore(t, s, sess.ID, rid)
			reacted := func() bool {
				for _, d := range eventData(t, s, sess.ID, "MESSAGES_REACTION") {
					if d["messageId"] == rid {
						return true
					}
				}
				return false
			}
			if !st.refused {
				testclient.Until(t, 10*time.Second, "messages.reaction of "+rid, reacted)
				if r := storedWithReactions(t, s, sess.ID, st.target).Message.Reactions; len(r) != 1 || r[0].Emoji != "💩" || r[0].Sender != userJID(ben) {
					t.Errorf("stored reactions %+v, want Ben's", r)
				}
				return
			}
			d := waitUpdateBy(t, s, sess.ID, rid)
			if d.ID != st.target || d.Chat != userJID(ben) || d.Status != "reaction-refused" || str(d.Sender) != userJID(ben) ||
				!strings.Contains(str(d.Error), "another chat than the message's") || d.Text != nil {
				t.Errorf("messages.update of the reaction %s: %+v (sender %q, error %q), want reaction-refused of %s in Ben's chat, saying why",
					rid, d, str(d.Sender), str(d.Error), st.target)
			}
			if reacted() {
				t.Errorf("the refused reaction %s was published as messages.reaction", rid)
			}
			if r := storedWithReactions(t, s, sess.ID, st.target).Message.Reactions; len(r) != 0 {
				t.Errorf("the message %s took the refused reaction: %+v", st.target, r)
			}
		})
	}
}

// TestReceivedPollBounds reproduces the poll of issue 31 finding 7: a
// received poll was taken whatever its options. Now one within WhatsApp's
// bounds (2-12 options of up to 100 characters, a question of up to 255:
// the bounds sends are held to) is a poll, and one beyond them is no poll:
// a message of type unknown with none of its text, not stored as a poll,
// its votes not counted.
func TestReceivedPollBounds(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, ana = apptest.LinkedPhone, "4915550311032"
	options := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprintf("Option %d", i+1)
		}
		return out
	}
	tests := []struct {
		name     string
		question string
		options  []string
		poll     bool
	}{
		{"twelve options", "Wann?", options(12), true},
		{"an option of 100 characters", "Wann?", []string{"Samstag", strings.Repeat("ä", 100)}, true},
		{"thirteen options", "Wann?", options(13), false},
		{"a thousand options", "Wann?", options(1000), false},
		{"an option of 101 characters", "Wann?", []string{"Samstag", strings.Repeat("ä", 101)}, false},
		{"a question of 256 characters", strings.Repeat("?", 256), options(2), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := n.SendPoll(ana, me, tt.question, tt.options)
			if err != nil {
				t.Fatal(err)
			}
			waitInStore(t, s, sess.ID, id)
			// The message store is written before the event log's
			// transaction commits (ingest.Sink.PublishAll): under load the
			// event can follow the stored message by a moment.
			var d map[string]any
			testclient.Until(t, 10*time.Second, "the inbound-message.upsert of "+id, func() bool {
				for _, x := range eventData(t, s, sess.ID, "INBOUND_MESSAGE_UPSERT") {
					if x["id"] == id {
						d = x
					}
				}
				return d != nil
			})
			got, _ := d["pollOptions"].([]any)
			stored := tally(t, s, sess.ID, id) // null: no stored poll
			if tt.poll {
				if d["type"] != "poll" || d["text"] != tt.question || len(got) != len(tt.options) || stored == nil || len(stored.Options) != len(tt.options) {
					t.Errorf("a poll within bounds: type %v, text %v, %d options, stored %+v; want the poll", d["type"], d["text"], len(got), stored)
				}
				return
			}
			if d["type"] != "unknown" || d["text"] != nil || d["pollOptions"] != nil {
				t.Errorf("a poll beyond bounds: type %v, text %.20v, %d options; want a message of type unknown without them", d["type"], d["text"], len(got))
			}
			if stored != nil {
				t.Errorf("a poll beyond bounds was stored as a poll of %d options", len(stored.Options))
			}
			vote, err := n.VotePoll(id, me, tt.options[:1])
			if err != nil {
				t.Fatal(err)
			}
			v := waitUpdateBy(t, s, sess.ID, vote)
			if !strings.Contains(str(v.Error), "not counted") {
				t.Errorf("a vote in a poll beyond bounds: %+v (error %q), want it not counted", v, str(v.Error))
			}
		})
	}
}
