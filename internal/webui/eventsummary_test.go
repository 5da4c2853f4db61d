package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
)

// TestEventSummaries: the events page says in words what each kind of
// the conversation surface is: who reacted with what to which message (or
// took the reaction back), who voted for which options of which poll (or
// withdrew the vote), who edited or deleted which message, who is typing,
// recording, online or offline, who calls and what became of the call, a
// new poll's question and options; receipts, a plain text and a deletion
// on this device keep their short lines. The events are the payload
// structs the WhatsApp adapter writes, published on the server's bus as
// the adapter's are, and read by the page over its live subscription
// (one case is raw JSON: the vote as surface.md spells it). A
// contact's markup in an emoji or an option name shows as text, never as
// an element, and the browser reports nothing.
func TestEventSummaries(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.Start(t, apptest.Config(t))
	sessionID := srv.CreateSession(t, "Summaries")
	b := newBrowser(t, srv.URL, 3*time.Minute, nil)

	const (
		contactJID = contactPhone + "@s.whatsapp.net"
		contactLID = "123456789012345@lid"
		ownerJID   = ownerPhone + "@s.whatsapp.net"
		groupJID   = "120363041234567890@g.us"
		target     = "3EB0C431D5B2E3F1A9C7" // a message reacted to, edited, deleted
		poll       = "3EB0F19A2B3C4D5E6F70" // a poll
		xssEmoji   = `<img src=x onerror=alert(1)>`
		xssOption  = `<b onmouseover=alert(2)>Green</b>`
	)
	at := payload.At(time.Date(2026, 11, 22, 10, 6, 1, 0, time.UTC))
	yes, no := true, false
	hashes := func(n int) []string {
		h := make([]string, n)
		for i := range h {
			h[i] = strings.Repeat(fmt.Sprint(i), 64)
		}
		return h
	}

	cases := []struct {
		name   string
		kind   events.Kind
		data   any    // a payload struct, as the adapter writes; or raw JSON
		want   string // the row's summary, exactly
		prefix bool   // want is only its start (a time in the reader's locale follows)
	}{
		{
			name: "a contact reacts",
			kind: events.MessagesReaction,
			data: &payload.Reaction{ID: target, Chat: contactJID, Sender: contactJID, SenderPhone: contactPhone, SenderLID: contactLID,
				Timestamp: at, MessageID: "3A7D21E09B4C5F6A7B8C",
				Reaction: payload.ReactionBody{Text: "👍", Key: payload.ReactionKey{ID: target, RemoteJID: ownerJID, FromMe: true}}},
			want: "+" + contactPhone + " reacted 👍 to " + target,
		},
		{
			name: "the account reacts",
			kind: events.MessagesReaction,
			data: &payload.Reaction{ID: target, Chat: contactJID, Sender: ownerJID, SenderPhone: ownerPhone, FromMe: true,
				Timestamp: at, MessageID: "3EB0AAAA0000000000A1",
				Reaction: payload.ReactionBody{Text: "❤️", Key: payload.ReactionKey{ID: target, RemoteJID: contactJID}}},
			want: "me reacted ❤️ to " + target,
		},
		{
			name: "a contact takes a reaction back",
			kind: events.MessagesReaction,
			data: &payload.Reaction{ID: target, Chat: contactJID, Sender: contactLID, SenderLID: contactLID,
				Timestamp: at, MessageID: "3A7D21E09B4C5F6A7B8D",
				Reaction: payload.ReactionBody{Text: "", Key: payload.ReactionKey{ID: target}}},
			want: contactLID + " removed their reaction to " + target,
		},
		{
			name: "a reaction with markup",
			kind: events.MessagesReaction,
			data: &payload.Reaction{ID: target, Chat: contactJID, Sender: contactJID, SenderPhone: contactPhone,
				Timestamp: at, MessageID: "3A7D21E09B4C5F6A7B8E",
				Reaction: payload.ReactionBody{Text: xssEmoji, Key: payload.ReactionKey{ID: target}}},
			want: "+" + contactPhone + " reacted " + xssEmoji + " to " + target,
		},
		{
			name: "a new poll",
			kind: events.InboundMessageUpsert,
			data: &payload.Message{ID: poll, Chat: groupJID, Sender: contactJID, SenderPhone: contactPhone, PushName: "Ann",
				Timestamp: at, Type: "poll", Text: "Which colour?", IsGroup: true, PollOptions: []string{"Red", "Blue", xssOption}},
			want: `Ann: [poll] Which colour? · "Red", "Blue", "` + xssOption + `"`,
		},
		{
			name: "a vote",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: poll, Chat: groupJID, Status: "voted", Timestamp: at, MessageID: "3A9C8B7A6F5E4D3C2B1A",
				PollVote: &payload.PollVote{Voter: contactJID, VoterPhone: contactPhone, VoterLID: contactLID,
					SelectedOptions: []string{"Red", "Blue"}, SelectedHashes: hashes(2)}},
			want: `+` + contactPhone + ` voted "Red", "Blue" in ` + poll,
		},
		{
			name: "a vote as surface.md spells it (vote, pollId)",
			kind: events.MessagesUpdate,
			data: json.RawMessage(`{"id":"` + poll + `","chat":"` + groupJID + `","status":"voted","vote":{"pollId":"` + poll +
				`","voter":"` + contactJID + `","voterPhone":"` + contactPhone + `","voterLid":null,"selectedOptions":["Blue"]}}`),
			want: `+` + contactPhone + ` voted "Blue" in ` + poll,
		},
		{
			name: "a vote by LID only",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: poll, Chat: groupJID, Status: "voted", Timestamp: at, MessageID: "3A9C8B7A6F5E4D3C2B1B",
				PollVote: &payload.PollVote{Voter: contactLID, VoterLID: contactLID,
					SelectedOptions: []string{xssOption}, SelectedHashes: hashes(1)}},
			want: contactLID + ` voted "` + xssOption + `" in ` + poll,
		},
		{
			name: "a vote withdrawn",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: poll, Chat: groupJID, Status: "voted", Timestamp: at, MessageID: "3A9C8B7A6F5E4D3C2B1C",
				PollVote: &payload.PollVote{Voter: contactJID, VoterPhone: contactPhone, SelectedOptions: []string{}, SelectedHashes: []string{}}},
			want: "+" + contactPhone + " withdrew their vote in " + poll,
		},
		{
			name: "a vote in a poll the session has not seen",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: poll, Chat: groupJID, Status: "voted", Timestamp: at, MessageID: "3A9C8B7A6F5E4D3C2B1D",
				PollVote: &payload.PollVote{Voter: contactJID, VoterPhone: contactPhone, SelectedHashes: hashes(2)}},
			want: "+" + contactPhone + " voted 2 options (names not known) in " + poll,
		},
		{
			name: "an edit",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: target, Chat: contactJID, Status: "edited", Timestamp: at, MessageID: "3A00EDIT",
				Text: "see you at 8 instead", Sender: contactJID},
			want: "+" + contactPhone + " edited " + target + ": see you at 8 instead",
		},
		{
			name: "a revoke",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: target, Chat: contactJID, Status: "revoked", Timestamp: at, MessageID: "3A00REVOKE", Sender: contactJID},
			want: "+" + contactPhone + " deleted " + target + " for everyone",
		},
		{
			name: "a read receipt",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: target, Chat: contactJID, Status: "read", Timestamp: at},
			want: "read · " + target,
		},
		{
			name: "a delivery receipt",
			kind: events.MessagesUpdate,
			data: &payload.MessageStatus{ID: target, Chat: contactJID, Status: "delivered", Timestamp: at},
			want: "delivered · " + target,
		},
		{
			name: "deleted on this device",
			kind: events.MessagesDelete,
			data: &payload.MessageDelete{ID: target, Chat: contactJID, FromMe: &no, Timestamp: at},
			want: "deleted " + target + " for me",
		},
		{
			name: "typing",
			kind: events.PresenceUpdate,
			data: &payload.Presence{Chat: contactJID, Participant: contactJID, ParticipantPhone: contactPhone, ParticipantLID: contactLID, Presence: "composing"},
			want: "+" + contactPhone + " is typing…",
		},
		{
			name: "recording in a group",
			kind: events.PresenceUpdate,
			data: &payload.Presence{Chat: groupJID, Participant: contactJID, ParticipantPhone: contactPhone, Presence: "recording", Media: "audio"},
			want: "+" + contactPhone + " is recording audio… in " + groupJID,
		},
		{
			name: "stopped typing",
			kind: events.PresenceUpdate,
			data: &payload.Presence{Chat: contactJID, Participant: contactJID, Presence: "paused"},
			want: "+" + contactPhone + " stopped typing",
		},
		{
			name: "online",
			kind: events.PresenceUpdate,
			data: &payload.Presence{Chat: contactJID, Participant: contactJID, ParticipantPhone: contactPhone, Presence: "available"},
			want: "+" + contactPhone + " is online",
		},
		{
			name: "offline, last seen hidden",
			kind: events.PresenceUpdate,
			data: &payload.Presence{Chat: contactJID, Participant: contactJID, ParticipantPhone: contactPhone, Presence: "unavailable"},
			want: "+" + contactPhone + " is offline",
		},
		{
			name:   "offline, last seen",
			kind:   events.PresenceUpdate,
			data:   &payload.Presence{Chat: contactJID, Participant: contactJID, ParticipantPhone: contactPhone, Presence: "unavailable", LastSeen: at},
			want:   "+" + contactPhone + " is offline · last seen ",
			prefix: true,
		},
		{
			name: "a video call",
			kind: events.Call,
			data: &payload.Call{CallID: "C1A7B2E3D4F5061728394A5B6C7D8E9F", From: contactJID, FromPhone: contactPhone, FromLID: contactLID,
				Status: "offer", IsVideo: &yes, Timestamp: at},
			want: "video call from +" + contactPhone + " · offer",
		},
		{
			name: "a video call rejected",
			kind: events.Call,
			data: &payload.Call{CallID: "C1A7B2E3D4F5061728394A5B6C7D8E9F", From: contactJID, FromPhone: contactPhone,
				Status: "reject", IsVideo: &yes, Timestamp: at},
			want: "video call from +" + contactPhone + " · reject",
		},
		{
			name: "a group call ended",
			kind: events.Call,
			data: &payload.Call{CallID: "C2", From: contactJID, FromPhone: contactPhone, Status: "terminate", IsGroup: true, GroupJID: groupJID,
				Reason: "timeout", Timestamp: at},
			want: "group call from +" + contactPhone + " · terminate · timeout",
		},
		{
			name: "a text, as before",
			kind: events.InboundMessageUpsert,
			data: &payload.Message{ID: "3A00TEXT", Chat: contactJID, Sender: contactJID, SenderPhone: contactPhone, PushName: "Ann",
				Timestamp: at, Type: "text", Text: "hello"},
			want: "Ann: hello",
		},
	}

	b.run(t, "signing in and opening the stream",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#new-session-name", chromedp.ByQuery),
		chromedp.Navigate(srv.URL+"/ui/#/sessions/"+sessionID+"/events"),
		chromedp.WaitVisible(`#stream-state[data-state="following"]`, chromedp.ByQuery),
	)
	waitSubscribers(t, srv, 1)

	evs := make([]events.New, len(cases))
	for i, c := range cases {
		data, err := json.Marshal(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		evs[i] = events.New{Kind: c.kind, Data: data}
	}
	envs, err := srv.App.Bus().Publish(context.Background(), sessionID, evs)
	if err != nil {
		t.Fatalf("publishing the events: %v", err)
	}

	var shown map[string]string // seq → the row's summary
	var markup int
	last := fmt.Sprintf(`#event-list li[data-seq="%d"]`, envs[len(envs)-1].Seq)
	b.run(t, "reading the stream",
		chromedp.WaitVisible(last, chromedp.ByQuery),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("#event-list li")].map((e) => [e.dataset.seq, e.querySelector(".event-summary").textContent]))`, &shown),
		chromedp.Evaluate(`document.querySelectorAll("#event-list .event-summary *, #event-list img, #event-list b").length`, &markup),
	)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := shown[fmt.Sprint(envs[i].Seq)]
			switch {
			case !ok:
				t.Errorf("no row for event #%d (%s)", envs[i].Seq, c.kind)
			case c.prefix && !strings.HasPrefix(got, c.want), !c.prefix && got != c.want:
				t.Errorf("the %s row shows %q, want %q", c.kind, got, c.want)
			}
		})
	}
	if markup != 0 {
		t.Errorf("the stream holds %d elements made from event data; it must show it as text", markup)
	}
	b.report(t)
}
