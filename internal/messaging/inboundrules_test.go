package messaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// What arrives from WhatsApp, held to WhatsApp's rules by the store and
// the service (issue 31, findings 5, 6 and 7). The end-to-end tests of
// internal/e2e show each against the simulated network.

// TestRecordJudgesEditsByTheirTime: an edit by the message's sender, in its
// chat, is applied within whatsapp.EditWindow of the message by the edit's
// own time and refused after it, the stored text kept and the event saying
// why; a forged edit is refused for what it is, late or not.
func TestRecordJudgesEditsByTheirTime(t *testing.T) {
	ctx := context.Background()
	e := newRulesEnv(t)
	store := NewStore(e.db, false)
	sent := e.now.Add(-time.Hour) // RECEIVED's time
	tests := []struct {
		name   string
		after  time.Duration
		sender string
		status string
		why    string // in the refusal
		stored string
	}{
		{"at the window's end", whatsapp.EditWindow, peerJID, "edited", "", "at the window's end"},
		{"15.1 minutes after", whatsapp.EditWindow + 6*time.Second, peerJID, "edit-refused", "an edit sent 15m6s after the message, later than WhatsApp's 15m0s window", "at the window's end"},
		{"21.2 minutes after", 21*time.Minute + 12*time.Second, peerJID, "edit-refused", "later than WhatsApp's 15m0s window", "at the window's end"},
		{"by another, late", 30 * time.Minute, groupJID, "edit-refused", "an edit by someone other than the message's sender", "at the window's end"},
		{"at once", time.Second, peerJID, "edited", "", "at once"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &payload.MessageStatus{ID: "RECEIVED", Chat: peerJID, Status: "edited", Timestamp: payload.At(sent.Add(tt.after)),
				MessageID: payload.Text(fmt.Sprintf("EDIT%d", i)), Sender: payload.Text(tt.sender), Text: payload.Text(tt.name)}
			ev := whatsapp.Event{Kind: whatsapp.KindMessagesUpdate, Data: d}
			if err := store.Record(ctx, "s1", &ev); err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || !strings.Contains(string(d.Error), tt.why) || (tt.why == "") != (d.Error == "") {
				t.Errorf("recorded as %s (%q), want %s saying %q", d.Status, d.Error, tt.status, tt.why)
			}
			if tt.status == "edit-refused" && d.Text != "" {
				t.Errorf("a refused edit keeps its text %q", d.Text)
			}
			if m := e.db.Message.Query().Where(entmessage.MessageID("RECEIVED")).OnlyX(ctx); m.Text != tt.stored {
				t.Errorf("stored text %q, want %q", m.Text, tt.stored)
			}
		})
	}
}

// TestRecordRefusesReactionsFromAnotherChat: a reaction naming a message of
// another chat becomes messages.update reaction-refused in place of
// messages.reaction, saying why, and the message keeps its reactions; one
// in the message's chat is applied and stays messages.reaction; one to a
// message the store never saw stays as it came.
func TestRecordRefusesReactionsFromAnotherChat(t *testing.T) {
	ctx := context.Background()
	e := newRulesEnv(t)
	store := NewStore(e.db, false)
	const other = "4915550777777@s.whatsapp.net"
	tests := []struct {
		name, target, chat string
		refused            bool
	}{
		{"from another direct chat", "RECEIVED", other, true},
		{"to a group message from a direct chat", "GROUPMSG", other, true},
		{"to a direct message from a group", "RECEIVED", groupJID, true},
		{"in the message's chat", "RECEIVED", peerJID, false},
		{"to a message never seen", "NOSUCH", other, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &payload.Reaction{ID: tt.target, Chat: tt.chat, Sender: other, Timestamp: payload.At(e.now),
				MessageID: fmt.Sprintf("REACT%d", i), Reaction: payload.ReactionBody{Text: "👍", Key: payload.ReactionKey{ID: tt.target}}}
			ev := whatsapp.Event{Kind: whatsapp.KindMessagesReaction, Data: d}
			if err := store.Record(ctx, "s1", &ev); err != nil {
				t.Fatal(err)
			}
			if !tt.refused {
				if ev.Kind != whatsapp.KindMessagesReaction || ev.Data != d {
					t.Errorf("recorded as %s %+v, want the reaction as it came", ev.Kind, ev.Data)
				}
				return
			}
			u, ok := ev.Data.(*payload.MessageStatus)
			if ev.Kind != whatsapp.KindMessagesUpdate || !ok {
				t.Fatalf("recorded as %s %T, want messages.update", ev.Kind, ev.Data)
			}
			if u.ID != tt.target || u.Chat != tt.chat || u.Status != "reaction-refused" || string(u.MessageID) != d.MessageID ||
				string(u.Sender) != other || !u.Timestamp.Equal(e.now) || !strings.Contains(string(u.Error), "another chat than the message's") {
				t.Errorf("recorded as %+v", u)
			}
			if m := e.db.Message.Query().Where(entmessage.MessageID(tt.target)).OnlyX(ctx); len(m.Reactions) != 0 {
				t.Errorf("the message took the refused reaction: %+v", m.Reactions)
			}
		})
	}
	if m := e.db.Message.Query().Where(entmessage.MessageID("RECEIVED")).OnlyX(ctx); len(m.Reactions) != 1 || m.Reactions[0].Sender != other {
		t.Errorf("after the reaction in its chat, reactions %+v, want that one", m.Reactions)
	}
}

// downloads is a Runner whose media downloads answer in turn from answers
// (an error, or nil for the media).
type downloads struct {
	mu      sync.Mutex
	answers []error
	calls   int
}

func (d *downloads) Run(_ context.Context, _ string, c whatsapp.Call) error {
	if answerConnected(c) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.Op != whatsapp.OpDownload().Name() {
		return fmt.Errorf("unexpected %s", c.Op)
	}
	d.calls++
	if len(d.answers) > 0 {
		err := d.answers[0]
		d.answers = d.answers[1:]
		if err != nil {
			return err
		}
	}
	*c.Result.(*[]byte) = []byte("the photo")
	return nil
}

// TestViewOnceServedOnce: a view-once message's media is served once, the
// first successful download being the view (a failed one gives it back);
// after it, NOT_FOUND naming the rule, and the download is not even tried.
// It is never forwarded. Ordinary media is served every time.
func TestViewOnceServedOnce(t *testing.T) {
	ctx := context.Background()
	e := newRulesEnv(t)
	wa := &downloads{answers: []error{fault.New(fault.WhatsAppTimeout, "media host slow"), errors.New("connection reset")}}
	s := New(Options{DB: e.db, Sender: wa, Loader: fakeLoader{}, Preparer: fakePreparer{}, Publisher: &events{}, Now: func() time.Time { return e.now }})
	media := []byte(`{"directPath":"/v/x","mimetype":"image/jpeg"}`)
	for _, id := range []string{"ONCE", "PLAIN"} {
		e.db.Message.Create().SetSessionID("s1").SetMessageID(id).SetChat(peerJID).SetSender(peerJID).SetFromMe(false).
			SetType("image").SetStatus(entmessage.StatusReceived).SetTimestamp(e.now).SetMedia(media).SetViewOnce(id == "ONCE").ExecX(ctx)
	}
	for i, want := range []string{"media host slow", "connection reset", ""} {
		md, err := s.Media(ctx, "s1", "ONCE")
		data := mediaBytes(t, md)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) || (err == nil && string(data) != "the photo") {
			t.Fatalf("download %d: %q, %v; want %q", i+1, data, err, want)
		}
	}
	if m := e.db.Message.Query().Where(entmessage.MessageID("ONCE")).OnlyX(ctx); m.ViewedAt == nil || !m.ViewedAt.Equal(e.now) {
		t.Errorf("viewed at %v, want %v", m.ViewedAt, e.now)
	}
	calls := wa.calls
	for range 2 {
		_, err := s.Media(ctx, "s1", "ONCE")
		wantFault(t, err, fault.NotFound, "", "message ONCE is view-once and was viewed: its media is served once")
	}
	if wa.calls != calls {
		t.Errorf("%d downloads after the view", wa.calls-calls)
	}
	for range 2 {
		md, err := s.Media(ctx, "s1", "PLAIN")
		if data := mediaBytes(t, md); err != nil || string(data) != "the photo" {
			t.Errorf("ordinary media: %q, %v", data, err)
		}
	}
	_, err := s.Send(ctx, "s1", Request{Type: TypeForward, Number: peerNumber, Forward: "ONCE"})
	wantFault(t, err, fault.Invalid, "messageId", "messageId ONCE names a view-once message: WhatsApp never forwards view-once messages")
}

// mediaBytes reads and closes what Service.Media returned; nil for no file.
func mediaBytes(t *testing.T, md MediaBody) []byte {
	t.Helper()
	if md.Body == nil {
		return nil
	}
	defer md.Body.Close()
	data, err := io.ReadAll(md.Body)
	if err != nil {
		t.Fatalf("read the media file: %v", err)
	}
	return data
}

// TestPollBoundsOneRule: what a send is refused for and what makes a
// received poll no poll are one rule (whatsapp's bounds): each poll is
// refused as a send exactly when it is beyond bounds as received.
func TestPollBoundsOneRule(t *testing.T) {
	ctx := context.Background()
	e := newRulesEnv(t)
	options := func(k, length int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprintf("%0*d", length, i)
		}
		return out
	}
	tests := []struct {
		name     string
		question string
		options  []string
	}{
		{"fewest options", "q", options(whatsapp.MinPollOptions, 1)},
		{"too few options", "q", options(whatsapp.MinPollOptions-1, 1)},
		{"most options", "q", options(whatsapp.MaxPollOptions, 2)},
		{"too many options", "q", options(whatsapp.MaxPollOptions+1, 2)},
		{"longest options", "q", options(2, whatsapp.MaxPollOptionLen)},
		{"an option too long", "q", options(2, whatsapp.MaxPollOptionLen+1)},
		{"longest question", strings.Repeat("ä", whatsapp.MaxPollQuestionLen), options(2, 1)},
		{"a question too long", strings.Repeat("ä", whatsapp.MaxPollQuestionLen+1), options(2, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.s.Send(ctx, "s1", Request{Type: TypePoll, Number: peerNumber, Question: tt.question, Options: tt.options})
			beyond := whatsapp.PollBeyondBounds(tt.question, tt.options)
			if (err != nil) != (beyond != "") {
				t.Errorf("a send: %v; as received: %q", err, beyond)
			}
		})
	}
}
