package whatsapp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// TestViewOnceReceived (issue 31, finding 6): a contact's view-once image
// arrives with viewOnce on its event and on its record, however the phone
// marked it (wrapped as phones send it, wrapped only, flagged only); an
// ordinary image without.
func TestViewOnceReceived(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	pic := tinyPNG(t)
	image := func(t *testing.T, flagged bool) *waE2E.ImageMessage {
		t.Helper()
		up, err := e.net.Upload(pic, whatsmeow.MediaImage)
		if err != nil {
			t.Fatal(err)
		}
		img := &waE2E.ImageMessage{
			URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			Mimetype: proto.String("image/png"),
		}
		if flagged {
			img.ViewOnce = proto.Bool(true)
		}
		return img
	}
	tests := []struct {
		name string
		msg  func(t *testing.T) *waE2E.Message
		want bool
	}{
		{"flagged and wrapped", func(t *testing.T) *waE2E.Message {
			return &waE2E.Message{ViewOnceMessageV2: &waE2E.FutureProofMessage{Message: &waE2E.Message{ImageMessage: image(t, true)}}}
		}, true},
		{"wrapped only", func(t *testing.T) *waE2E.Message {
			return &waE2E.Message{ViewOnceMessage: &waE2E.FutureProofMessage{Message: &waE2E.Message{ImageMessage: image(t, false)}}}
		}, true},
		{"flagged only", func(t *testing.T) *waE2E.Message { return &waE2E.Message{ImageMessage: image(t, true)} }, true},
		{"ordinary", func(t *testing.T) *waE2E.Message { return &waE2E.Message{ImageMessage: image(t, false)} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := e.net.SendMessage(peer, phone, tt.msg(t))
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := e.event("s1", KindInboundMessage, id)
			wantData(t, "inbound-message.upsert", ev.Data, map[string]any{"type": "image", "viewOnce": tt.want})
			if ev.Message == nil || ev.Message.ViewOnce != tt.want || ev.Message.Media == nil {
				t.Errorf("record %+v, want viewOnce %v with its media", ev.Message, tt.want)
			}
		})
	}
	e.settle(st)
}

// TestPollBounds (issue 31, finding 7): a received poll within WhatsApp's
// bounds is a poll; one beyond them (too few or too many options, an
// option or the question too long) is a message of type unknown with
// nothing of the poll, its options not remembered to name votes with.
func TestPollBounds(t *testing.T) {
	t.Parallel()
	options := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprintf("o%d", i+1)
		}
		return out
	}
	tests := []struct {
		name     string
		question string
		options  []string
		beyond   string // what PollBeyondBounds says, in part; "" within bounds
	}{
		{"two options", "Lunch?", options(MinPollOptions), ""},
		{"twelve options", "Lunch?", options(MaxPollOptions), ""},
		{"options and question at their longest", strings.Repeat("ß", MaxPollQuestionLen),
			[]string{strings.Repeat("é", MaxPollOptionLen), "b"}, ""},
		{"one option", "Lunch?", options(1), "2 to 12 options, this one 1"},
		{"thirteen options", "Lunch?", options(MaxPollOptions + 1), "2 to 12 options, this one 13"},
		{"ten thousand options", "Lunch?", options(10_000), "this one 10000"},
		{"an option too long", "Lunch?", []string{"a", strings.Repeat("é", MaxPollOptionLen+1)}, "option 2 has 101"},
		{"a question too long", strings.Repeat("ß", MaxPollQuestionLen+1), options(2), "at most 255 characters, this one 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PollBeyondBounds(tt.question, tt.options); (got == "") != (tt.beyond == "") || !strings.Contains(got, tt.beyond) {
				t.Errorf("PollBeyondBounds = %q, want %q", got, tt.beyond)
			}
			opts := make([]*waE2E.PollCreationMessage_Option, len(tt.options))
			for i, o := range tt.options {
				opts[i] = &waE2E.PollCreationMessage_Option{OptionName: proto.String(o)}
			}
			c := contentOf(&waE2E.Message{PollCreationMessageV3: &waE2E.PollCreationMessage{Name: proto.String(tt.question), Options: opts}})
			switch {
			case tt.beyond == "" && (c.typ != "poll" || c.text != tt.question || len(c.pollOptions) != len(tt.options) || c.beyond != ""):
				t.Errorf("contentOf = type %q, %d options, beyond %q; want the poll", c.typ, len(c.pollOptions), c.beyond)
			case tt.beyond != "" && (c.typ != "unknown" || c.text != "" || c.pollOptions != nil || !strings.Contains(c.beyond, tt.beyond)):
				t.Errorf("contentOf = type %q, text %.20q, %d options, beyond %q; want unknown, saying why", c.typ, c.text, len(c.pollOptions), c.beyond)
			}
		})
	}

	// Through a session: the options of a poll beyond bounds are not kept
	// to name the votes with.
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	for _, tt := range []struct {
		options []string
		named   bool
	}{{options(MaxPollOptions), true}, {options(MaxPollOptions + 1), false}} {
		pollID, err := e.net.SendPoll(peer, phone, "Lunch?", tt.options)
		if err != nil {
			t.Fatal(err)
		}
		poll, _ := e.event("s1", KindInboundMessage, pollID)
		if typ := poll.Data["type"]; (typ == "poll") != tt.named || (poll.Message.Poll != nil) != tt.named {
			t.Errorf("a poll of %d options: type %v, record poll %+v", len(tt.options), typ, poll.Message.Poll)
		}
		voteID, err := e.net.VotePoll(pollID, phone, tt.options[:1])
		if err != nil {
			t.Fatal(err)
		}
		ev := e.eventWhere("s1", KindMessagesUpdate, func(d map[string]any) bool { return d["messageId"] == voteID })
		v, _ := ev.Data["vote"].(map[string]any)
		if names, _ := v["selectedOptions"].([]any); (len(names) == 1) != tt.named {
			t.Errorf("a vote in a poll of %d options names %v", len(tt.options), v["selectedOptions"])
		}
	}
	e.settle(st)
}

// TestEditKeepsItsOwnTime (issue 31, finding 5): an edit's messages.update
// carries the edit's own time, the stanza's, which the simulated phone
// stamps as asked (SendEdit's at): the message store judges the window by
// it.
func TestEditKeepsItsOwnTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	theirs, err := e.net.SendText(peer, phone, "see you at 10")
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, theirs)
	mine, err := m.Send(ctx, "s1", Outgoing{To: phoneJID(peer), Type: "text", Text: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	e.inboxMessage(peer, mine.ID) // the edit names it as the message received
	for _, tt := range []struct {
		name, id string
		after    time.Duration
	}{
		{"its own message", theirs, EditWindow + 6*time.Second},
		{"the account's message", mine.ID, 20 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			at := time.Now().Add(tt.after).Truncate(time.Second)
			editID, err := e.net.SendEdit(peer, phone, tt.id, "see you at 11", at)
			if err != nil {
				t.Fatal(err)
			}
			ev := e.eventWhere("s1", KindMessagesUpdate, func(d map[string]any) bool { return d["messageId"] == editID })
			wantData(t, "messages.update", ev.Data, map[string]any{"id": tt.id, "status": "edited", "timestamp": Timestamp(at)})
		})
	}
	e.settle(st)
}
