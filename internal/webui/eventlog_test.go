package webui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
)

// lockedBuffer is a buffer the server's log writes to from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// storedEvent is an event of the session's log as the API gives it.
type storedEvent struct {
	ID   string
	Seq  int
	Kind string
}

// TestDashboardStoredEventsInABrowser: a session holding over 100 stored
// events, its events page opens on them, newest first, 50 to a page, each
// "Show older" adding the next 50 until the oldest (then the button goes);
// filtered by kind it shows the stored events of that kind, newest first;
// an event stored afterwards arrives on top, once, and one of a kind left
// out does not. The delivery log shows for each delivery what was
// delivered: the kind, the event's seq and id, and the line the events
// page shows for it (who wrote what: the API shows the same user the
// same), shortened past 120 characters and shown as text. Each at a
// desktop's and at a phone's width. The server's log holds none of the
// message texts.
func TestDashboardStoredEventsInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	recv := newReceiver(t)
	var logs lockedBuffer
	cfg := apptest.Config(t)
	cfg.AllowPrivateURLs = true
	srv := apptest.StartLogged(t, cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	sessionID := srv.CreateSession(t, "History")
	var created struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $u: String!) { createWebhook(sessionId: $s, input: { url: $u }) { webhook { id } } }`,
		map[string]any{"s": sessionID, "u": recv.URL}, &created)
	webhookID := created.CreateWebhook.Webhook.ID

	// 130 events: texts from Ann, every fourth a contact typing; the last
	// two a text of markup and a long one.
	const contactJID = contactPhone + "@s.whatsapp.net"
	long := "a long message: " + strings.Repeat("lorem ipsum dolor sit amet ", 12)
	text := func(i int) string {
		switch i {
		case 129:
			return xssText
		case 130:
			return long
		}
		return fmt.Sprintf("stored message %d", i)
	}
	summaries := map[string]string{} // event id → the line the dashboard shows for it
	publish := func(news []events.New, lines []string) {
		t.Helper()
		envs, err := srv.App.Bus().Publish(context.Background(), sessionID, news)
		if err != nil {
			t.Fatalf("publishing: %v", err)
		}
		for i, e := range envs {
			summaries[e.ID] = lines[i]
		}
	}
	for start := 1; start <= 130; start += 10 {
		var news []events.New
		var lines []string
		for i := start; i < start+10; i++ {
			var data any
			var kind events.Kind
			if i%4 == 0 {
				kind = events.PresenceUpdate
				data = &payload.Presence{Chat: contactJID, Participant: contactJID, ParticipantPhone: contactPhone, Presence: "composing"}
				lines = append(lines, "+"+contactPhone+" is typing…")
			} else {
				kind = events.InboundMessageUpsert
				data = &payload.Message{ID: fmt.Sprintf("3A00%016d", i), Chat: contactJID, Sender: contactJID, SenderPhone: contactPhone,
					PushName: "Ann", Timestamp: payload.At(time.Date(2026, 11, 22, 10, 0, i%60, 0, time.UTC)), Type: "text", Text: payload.Text(text(i))}
				lines = append(lines, shortened("Ann: "+text(i)))
			}
			b, err := json.Marshal(data)
			if err != nil {
				t.Fatal(err)
			}
			news = append(news, events.New{Kind: kind, Data: b})
		}
		publish(news, lines)
	}
	stored := func(kinds string) []storedEvent {
		t.Helper()
		var r struct {
			Events struct {
				Edges []struct{ Node storedEvent }
			}
		}
		srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { events(sessionId: $s, first: 500`+kinds+`) { edges { node { id seq kind } } } }`,
			map[string]any{"s": sessionID}, &r)
		var out []storedEvent
		for _, e := range slices.Backward(r.Events.Edges) {
			out = append(out, e.Node)
		}
		return out // newest first
	}
	srv.WaitDeliveries(t, sessionID, webhookID)

	b := newBrowser(t, srv.URL, 5*time.Minute, nil)
	signIn(t, b)
	shownIDs := func(t *testing.T) []string {
		var ids []string
		b.run(t, "reading the stream", chromedp.Evaluate(`[...document.querySelectorAll("#event-list li")].map((e) => e.dataset.id)`, &ids))
		return ids
	}
	ids := func(evs []storedEvent) []string {
		out := make([]string, len(evs))
		for i, e := range evs {
			out[i] = e.ID
		}
		return out
	}
	rowCount := func(n int) chromedp.Action {
		return chromedp.Poll(fmt.Sprintf(`document.querySelectorAll("#event-list li").length === %d`, n), nil, chromedp.WithPollingTimeout(20*time.Second))
	}
	for _, v := range viewports {
		t.Run(v.name, func(t *testing.T) {
			all := stored("")
			if len(all) <= 100 {
				t.Fatalf("the session holds %d events, want over 100", len(all))
			}
			b.run(t, "opening the events page",
				v.emulate(),
				chromedp.Navigate(srv.URL+"/ui/#/sessions/"+sessionID+"/events"),
				chromedp.WaitVisible(`#stream-state[data-state="following"]`, chromedp.ByQuery),
				rowCount(50),
			)
			if got := shownIDs(t); !slices.Equal(got, ids(all[:50])) {
				t.Fatalf("the page opens on %d events %v\nwant the newest 50, newest first: %v", len(got), got, ids(all[:50]))
			}
			b.run(t, "showing older events", chromedp.Click("#events-older", chromedp.ByQuery), rowCount(100))
			if got := shownIDs(t); !slices.Equal(got, ids(all[:100])) {
				t.Errorf("after one \"Show older\" the page shows %v\nwant the newest 100: %v", got, ids(all[:100]))
			}
			var hidden bool
			b.run(t, "showing the oldest", chromedp.Click("#events-older", chromedp.ByQuery), rowCount(len(all)),
				chromedp.Evaluate(`document.querySelector("#events-older").getClientRects().length === 0`, &hidden))
			if got := shownIDs(t); !slices.Equal(got, ids(all)) {
				t.Errorf("after two \"Show older\" the page shows %v\nwant every event: %v", got, ids(all))
			}
			if !hidden {
				t.Error("\"Show older\" is still offered with the oldest event shown")
			}

			// Filtered: the stored events of the kind, newest first.
			upserts := stored(", kinds: [INBOUND_MESSAGE_UPSERT]")
			b.run(t, "filtering",
				chromedp.Click("#kinds-summary", chromedp.ByQuery),
				chromedp.Click(`#kinds input[data-kind="INBOUND_MESSAGE_UPSERT"]`, chromedp.ByQuery),
				chromedp.Poll(fmt.Sprintf(`(() => { const l = [...document.querySelectorAll("#event-list li")]; return l.length === 50 && l[0].dataset.id === %q && l.every((e) => e.dataset.kind === "INBOUND_MESSAGE_UPSERT"); })()`,
					upserts[0].ID), nil, chromedp.WithPollingTimeout(20*time.Second)),
				chromedp.Click("#kinds-summary", chromedp.ByQuery),
			)
			if got := shownIDs(t); !slices.Equal(got, ids(upserts[:50])) {
				t.Errorf("filtered to inbound-message.upsert the page shows %v\nwant its newest 50: %v", got, ids(upserts[:50]))
			}

			// Live, on top of the stored ones: once, and only of the kind.
			waitSubscribers(t, srv, 1)
			live := "live at " + v.name + " width"
			liveData, _ := json.Marshal(&payload.Message{ID: "3A00LIVE" + strings.ToUpper(v.name), Chat: contactJID, Sender: contactJID,
				SenderPhone: contactPhone, PushName: "Ann", Type: "text", Text: payload.Text(live)})
			typing, _ := json.Marshal(&payload.Presence{Chat: contactJID, Participant: contactJID, Presence: "paused"})
			publish([]events.New{{Kind: events.PresenceUpdate, Data: typing}, {Kind: events.InboundMessageUpsert, Data: liveData}},
				[]string{"+" + contactPhone + " stopped typing", "Ann: " + live})
			var first string
			b.run(t, "the live event", rowCount(51), chromedp.Text("#event-list li:first-child .event-summary", &first, chromedp.ByQuery))
			if first != "Ann: "+live {
				t.Errorf("the newest row reads %q, want the live message", first)
			}
			upserts = stored(", kinds: [INBOUND_MESSAGE_UPSERT]")
			if got := shownIDs(t); !slices.Equal(got, ids(upserts[:51])) {
				t.Errorf("after a live event the page shows %v\nwant %v", got, ids(upserts[:51]))
			}

			// The delivery log: what each delivery carried.
			b.run(t, "the delivery log",
				chromedp.Navigate(srv.URL+"/ui/#/sessions/"+sessionID+"/webhooks/"+webhookID),
				chromedp.WaitVisible(`#delivery-rows tr[data-delivery-id]`, chromedp.ByQuery),
			)
			srv.WaitDeliveries(t, sessionID, webhookID)
			var rows []struct{ EventID, Kind, Seq, ID, Summary string }
			var markup int
			b.run(t, "reading the delivery log",
				chromedp.Poll(`[...document.querySelectorAll("#delivery-rows tr[data-delivery-id]")].every((r) => r.dataset.status === "DELIVERED" && r.querySelector(".event-summary") && r.querySelector(".event-summary").textContent !== "")`,
					nil, chromedp.WithPollingTimeout(20*time.Second)),
				chromedp.Evaluate(`[...document.querySelectorAll("#delivery-rows tr[data-delivery-id]")].map((r) => ({
					EventID: r.dataset.eventId,
					Kind: r.querySelector(".kind").textContent,
					Seq: r.querySelector(".seq").textContent,
					ID: r.querySelector(".event-id").textContent,
					Summary: r.querySelector(".event-summary").textContent }))`, &rows),
				chromedp.Evaluate(`document.querySelectorAll("#delivery-rows .event-summary *, #delivery-rows img, #delivery-rows b").length`, &markup),
			)
			all = stored("")
			bySeq := map[string]storedEvent{}
			for _, e := range all {
				bySeq[e.ID] = e
			}
			if len(rows) != 20 {
				t.Errorf("the delivery log shows %d deliveries, want its first page of 20", len(rows))
			}
			for _, r := range rows {
				e, ok := bySeq[r.EventID]
				if !ok {
					t.Errorf("a delivery of event %s, which the session does not hold", r.EventID)
				}
				if r.Seq != fmt.Sprintf("#%d", e.Seq) || r.ID != r.EventID || r.Summary != summaries[r.EventID] {
					t.Errorf("the delivery of event %s (seq %d) shows %+v\nwant #%d, its id and %q", r.EventID, e.Seq, r, e.Seq, summaries[r.EventID])
				}
			}
			if markup != 0 {
				t.Errorf("the delivery log holds %d elements made from event data; it must show it as text", markup)
			}
		})
	}
	b.report(t)
	for i := 1; i <= 130; i++ {
		if i%4 != 0 && strings.Contains(logs.String(), text(i)) {
			t.Errorf("the server's log holds the text of message %d", i)
		}
	}
}

// shortened is a line of the delivery log as it is shown: at most 120
// characters, the last of them an ellipsis when cut.
func shortened(s string) string {
	if r := []rune(s); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return s
}
