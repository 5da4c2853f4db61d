package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

const eventsSubscription = `subscription($s: ID!, $k: [EventKind!], $a: String) {
  events(sessionId: $s, kinds: $k, after: $a) { id seq kind sessionId occurredAt data }
}`

// gqlEvent is an Event as a client reads it.
type gqlEvent struct {
	ID         string
	Seq        int64
	Kind       string
	SessionID  string
	OccurredAt string
	Data       json.RawMessage
}

// text is the text of a message event's data.
func (e gqlEvent) text() string {
	var d struct{ Text *string }
	_ = json.Unmarshal(e.Data, &d)
	return str(d.Text)
}

// readEvent reads the next event of a stream; anything else fails the test.
func readEvent(t testing.TB, st apptest.Stream) gqlEvent {
	t.Helper()
	r := st.Read(t, 20*time.Second)
	if r.Closed || r.Complete || len(r.Errors) > 0 {
		t.Fatalf("subscription ended or failed instead of an event: %+v", r)
	}
	var out struct{ Events gqlEvent }
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatalf("event %s: %v", r.Data, err)
	}
	return out.Events
}

// waitSubscribers waits until the server's bus has n subscribers: a
// subscription the client started is registered.
func waitSubscribers(t testing.TB, s *apptest.Server, n int) {
	t.Helper()
	for range 400 {
		if s.App.Bus().Subscribers() == n {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%d subscribers, want %d", s.App.Bus().Subscribers(), n)
}

// sendTexts has the contact's phone send texts to the account, in order.
func sendTexts(t testing.TB, n *wafake.Network, from, to string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if _, err := n.SendText(from, to, text); err != nil {
			t.Fatalf("send %q: %v", text, err)
		}
	}
}

// readTexts reads the message events of a stream until it has the texts
// it wants, failing on anything out of order, repeated, or missing.
func readTexts(t testing.TB, st apptest.Stream, want ...string) []gqlEvent {
	t.Helper()
	var got []gqlEvent
	for len(got) < len(want) {
		e := readEvent(t, st)
		if e.Kind != "INBOUND_MESSAGE_UPSERT" {
			continue
		}
		if e.text() != want[len(got)] {
			t.Fatalf("event %d: text %q, want %q (got %v before)", len(got), e.text(), want[len(got)], texts(got))
		}
		got = append(got, e)
	}
	return got
}

// sameJSON compares two JSON values, whatever their keys' order (the
// test client's GraphQL decoder sorts them).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func texts(evs []gqlEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.text()
	}
	return out
}

var inboundOnly = []string{"INBOUND_MESSAGE_UPSERT"}

// TestEventsOverEachTransport: a subscription over graphql-transport-ws,
// one over the legacy graphql-ws and one over server-sent events receive
// the same live events, in the same order, with the same ids, as the
// events query then lists them.
func TestEventsOverEachTransport(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550013002"
	vars := map[string]any{"s": sess.ID, "k": []string{"INBOUND_MESSAGE_UPSERT", "CHATS_UPSERT"}}
	streams := map[string]apptest.Stream{
		"graphql-transport-ws": s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{}),
		"graphql-ws":           s.SubscribeLegacyWS(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{}),
		"sse":                  s.SubscribeSSE(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{}),
	}
	waitSubscribers(t, s, len(streams))
	sendTexts(t, s.Network(t), contact, phone, "one", "two", "three")

	var first []gqlEvent
	for _, name := range []string{"graphql-transport-ws", "graphql-ws", "sse"} {
		t.Run(name, func(t *testing.T) {
			st := streams[name]
			var got []gqlEvent
			for range 4 {
				got = append(got, readEvent(t, st))
			}
			kinds := []string{got[0].Kind, got[1].Kind, got[2].Kind, got[3].Kind}
			if !slices.Equal(kinds, []string{"CHATS_UPSERT", "INBOUND_MESSAGE_UPSERT", "INBOUND_MESSAGE_UPSERT", "INBOUND_MESSAGE_UPSERT"}) {
				t.Fatalf("kinds %v", kinds)
			}
			if tx := texts(got[1:]); !slices.Equal(tx, []string{"one", "two", "three"}) {
				t.Errorf("texts %v", tx)
			}
			var chat struct {
				ID      string
				IsGroup bool
			}
			_ = json.Unmarshal(got[0].Data, &chat)
			if chat.ID != contact+"@s.whatsapp.net" || chat.IsGroup {
				t.Errorf("chats.upsert data %s", got[0].Data)
			}
			for i, e := range got {
				if e.SessionID != sess.ID || !strings.HasPrefix(e.ID, "evt_") || e.OccurredAt == "" {
					t.Errorf("event %d: %+v", i, e)
				}
				if i > 0 && e.Seq <= got[i-1].Seq {
					t.Errorf("seq %d after %d", e.Seq, got[i-1].Seq)
				}
			}
			if first == nil {
				first = got
			} else if !slices.EqualFunc(first, got, func(a, b gqlEvent) bool { return a.ID == b.ID && string(a.Data) == string(b.Data) }) {
				t.Errorf("events differ from graphql-transport-ws's:\n%+v\n%+v", got, first)
			}
		})
	}
	// The query lists the same stored events.
	var page struct {
		Events struct {
			Edges []struct {
				Cursor string
				Node   gqlEvent
			}
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { events(sessionId: $s, kinds: [CHATS_UPSERT, INBOUND_MESSAGE_UPSERT]) { edges { cursor node { id seq kind sessionId occurredAt data } } } }`,
		map[string]any{"s": sess.ID}, &page)
	if len(page.Events.Edges) != len(first) {
		t.Fatalf("query lists %d events, subscriptions got %d", len(page.Events.Edges), len(first))
	}
	for i, e := range page.Events.Edges {
		if e.Cursor != first[i].ID || e.Node.ID != first[i].ID || !sameJSON(e.Node.Data, first[i].Data) || e.Node.OccurredAt != first[i].OccurredAt {
			t.Errorf("query event %d: %s %s %s, live %s %s %s", i, e.Cursor, e.Node.OccurredAt, e.Node.Data, first[i].ID, first[i].OccurredAt, first[i].Data)
		}
	}
}

// TestEventsResume: a subscriber that reconnects with after = the last
// event it received gets exactly what it missed, then live events, with no
// duplicate; also across a restart of the server, with messages the
// network queued while the server was down.
func TestEventsResume(t *testing.T) {
	t.Parallel()
	net, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control
	const phone, contact = "4915550013101", "4915550013102"
	first := apptest.StartLive(t, cfg)
	sess := first.LinkSession(t, phone)
	vars := func(after string) map[string]any {
		v := map[string]any{"s": sess.ID, "k": inboundOnly}
		if after != "" {
			v["a"] = after
		}
		return v
	}

	st := first.SubscribeWS(t, apptest.AdminToken, eventsSubscription, vars(""), apptest.StreamOptions{})
	waitSubscribers(t, first, 1)
	sendTexts(t, net, contact, phone, "a1", "a2")
	got := readTexts(t, st, "a1", "a2")
	st.Close()
	waitSubscribers(t, first, 0)

	// Missed while away: b1, b2. Stored before the subscriber is back.
	sendTexts(t, net, contact, phone, "b1", "b2")
	waitInbound(t, first, sess.ID, 4)
	st = first.SubscribeLegacyWS(t, apptest.AdminToken, eventsSubscription, vars(got[1].ID), apptest.StreamOptions{})
	got = readTexts(t, st, "b1", "b2")
	waitSubscribers(t, first, 1)
	sendTexts(t, net, contact, phone, "c1", "c2")
	got = readTexts(t, st, "c1", "c2") // c1 right after b2: nothing doubled
	last := got[1]
	st.Close()

	apptest.Settle(t, net, sess)
	first.Stop(t)
	// Queued by the network while the server is down.
	sendTexts(t, net, contact, phone, "d1", "d2")

	second := apptest.StartLive(t, cfg)
	second.WaitStatus(t, sess.ID, "CONNECTED", nil)
	second.Track(sess)
	st = second.SubscribeSSE(t, apptest.AdminToken, eventsSubscription, vars(last.ID), apptest.StreamOptions{})
	got = readTexts(t, st, "d1", "d2")
	if got[0].Seq <= last.Seq {
		t.Errorf("after the restart seq %d follows %d", got[0].Seq, last.Seq)
	}
	waitSubscribers(t, second, 1)
	sendTexts(t, net, contact, phone, "e1")
	readTexts(t, st, "e1")
}

// waitInbound waits until the session's log holds n inbound messages.
func waitInbound(t testing.TB, s *apptest.Server, sessionID string, n int) {
	t.Helper()
	for range 400 {
		var page struct {
			Events struct{ Edges []struct{ Cursor string } }
		}
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { events(sessionId: $s, kinds: [INBOUND_MESSAGE_UPSERT], first: 500) { edges { cursor } } }`,
			map[string]any{"s": sessionID}, &page)
		if len(page.Events.Edges) >= n {
			return
		}
		sleep()
	}
	t.Fatalf("the log of session %s did not reach %d inbound messages", sessionID, n)
}

// TestEventsStalledSubscriber: a subscriber that stops reading its socket
// is cut off once its buffer is full (the socket's buffers, then the bus's
// buffer), while another subscriber of the same
// session keeps receiving every event. When it reads again it finds the
// events it had been sent, then an error naming the last of them
// (RATE_LIMITED, extensions.lastEventId), then the end; resuming after
// that id continues without a gap.
func TestEventsStalledSubscriber(t *testing.T) {
	for _, tr := range []string{"graphql-transport-ws", "graphql-ws", "sse"} {
		t.Run(tr, func(t *testing.T) { stalledSubscriber(t, tr) })
	}
}

func stalledSubscriber(t *testing.T, transport string) {
	// 16 live events per subscriber: the cut follows soon after the
	// stalled socket's buffers are full, well before its writes time out.
	s, sess := apptest.StartLinkedWith(t, func(_ *config.Config, opts *app.Options) { opts.EventBuffer = 16 })
	const phone, contact = apptest.LinkedPhone, "4915550013202"
	net := s.Network(t)
	vars := map[string]any{"s": sess.ID}
	fast := s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{})
	small := apptest.StreamOptions{ReadBuffer: 4096}
	var stalled apptest.Stream
	switch transport {
	case "graphql-transport-ws":
		stalled = s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, vars, small)
	case "graphql-ws":
		stalled = s.SubscribeLegacyWS(t, apptest.AdminToken, eventsSubscription, vars, small)
	case "sse":
		stalled = s.SubscribeSSE(t, apptest.AdminToken, eventsSubscription, vars, small)
	}
	waitSubscribers(t, s, 2)

	// Batches of messages, each read whole by the fast subscriber before
	// the next, until the bus cuts the stalled one off.
	var fastGot []gqlEvent
	readFast := func(last string) {
		t.Helper()
		for {
			e := readEvent(t, fast)
			if n := len(fastGot); n > 0 && e.Seq != fastGot[n-1].Seq+1 {
				t.Fatalf("fast subscriber: seq %d after %d", e.Seq, fastGot[n-1].Seq)
			}
			fastGot = append(fastGot, e)
			if e.Kind == "INBOUND_MESSAGE_UPSERT" && e.text() == last {
				return
			}
		}
	}
	const batch = 20
	sent := 0
	for s.App.Bus().Subscribers() == 2 {
		if sent >= 3000 {
			t.Fatalf("%d messages and the stalled subscriber is still served", sent)
		}
		var texts []string
		for range batch {
			// Long texts fill the sockets' buffers (megabytes on
			// loopback) in a few hundred messages.
			texts = append(texts, fmt.Sprintf("m%d ", sent)+strings.Repeat("x", 32<<10))
			sent++
		}
		sendTexts(t, net, contact, phone, texts...)
		readFast(texts[batch-1])
	}
	t.Logf("cut after %d messages", sent)
	// After the cut the fast subscriber goes on.
	sendTexts(t, net, contact, phone, "after the cut")
	readFast("after the cut")

	var stalledGot []gqlEvent
	var end apptest.Result
	for {
		r := stalled.Read(t, 20*time.Second)
		if r.Closed || r.Complete || len(r.Errors) > 0 {
			end = r
			break
		}
		var out struct{ Events gqlEvent }
		if err := json.Unmarshal(r.Data, &out); err != nil {
			t.Fatal(err)
		}
		stalledGot = append(stalledGot, out.Events)
	}
	if len(stalledGot) == 0 {
		t.Fatal("the stalled subscriber had received nothing")
	}
	for i := 1; i < len(stalledGot); i++ {
		if stalledGot[i].Seq != stalledGot[i-1].Seq+1 {
			t.Fatalf("stalled subscriber: seq %d after %d", stalledGot[i].Seq, stalledGot[i-1].Seq)
		}
	}
	lastID := stalledGot[len(stalledGot)-1].ID
	if len(end.Errors) != 1 {
		t.Fatalf("the stalled subscriber ended with %+v, want one error", end)
	}
	e := end.Errors[0]
	if e.Code() != "RATE_LIMITED" || e.Extensions["lastEventId"] != lastID || !strings.Contains(e.Message, lastID) ||
		len(e.Path) != 1 || e.Path[0] != "events" || string(end.Data) != `{"events":null}` {
		t.Errorf("error %+v with data %s, want RATE_LIMITED on events naming %s", e, end.Data, lastID)
	}
	t.Logf("%d events, then: %s", len(stalledGot), e.Message)
	if r := stalled.Read(t, 20*time.Second); !r.Complete {
		t.Errorf("after the error: %+v, want complete", r)
	}

	again := s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, map[string]any{"s": sess.ID, "a": lastID}, apptest.StreamOptions{})
	if ev := readEvent(t, again); ev.Seq != stalledGot[len(stalledGot)-1].Seq+1 {
		t.Errorf("resumed at seq %d after %d", ev.Seq, stalledGot[len(stalledGot)-1].Seq)
	}
}

// TestEventsTokens: a bad token is refused on every transport; revoking a
// token ends its streams on every transport; deleting the session ends the
// streams of tokens that outlive it.
func TestEventsTokens(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	sid := s.CreateSession(t, "tokens")
	vars := map[string]any{"s": sid}
	t.Run("bad token", func(t *testing.T) {
		for name, open := range map[string]func() apptest.Stream{
			"graphql-transport-ws": func() apptest.Stream {
				return s.SubscribeWS(t, "wgu_notAToken", eventsSubscription, vars, apptest.StreamOptions{})
			},
			"graphql-ws": func() apptest.Stream {
				return s.SubscribeLegacyWS(t, "wgu_notAToken", eventsSubscription, vars, apptest.StreamOptions{})
			},
			"sse": func() apptest.Stream {
				return s.SubscribeSSE(t, "wgu_notAToken", eventsSubscription, vars, apptest.StreamOptions{})
			},
		} {
			r := open().Read(t, 10*time.Second)
			want := 4403
			if name == "sse" {
				want = 401
			}
			if !r.Closed || (r.CloseCode != want && !(name == "graphql-ws" && r.CloseCode == 0)) {
				t.Errorf("%s: %+v, want refused (%d)", name, r, want)
			}
		}
		if n := s.App.Bus().Subscribers(); n != 0 {
			t.Errorf("%d subscribers after refusals", n)
		}
	})
	t.Run("revoked token", func(t *testing.T) {
		var tok struct{ CreateSessionToken string }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, vars, &tok)
		streams := map[string]apptest.Stream{
			"graphql-transport-ws": s.SubscribeWS(t, tok.CreateSessionToken, eventsSubscription, vars, apptest.StreamOptions{}),
			"graphql-ws":           s.SubscribeLegacyWS(t, tok.CreateSessionToken, eventsSubscription, vars, apptest.StreamOptions{}),
			"sse":                  s.SubscribeSSE(t, tok.CreateSessionToken, eventsSubscription, vars, apptest.StreamOptions{}),
		}
		waitSubscribers(t, s, 3)
		s.MustGraphQL(t, apptest.AdminToken, `mutation($t: String!) { revokeToken(token: $t) }`, map[string]any{"t": tok.CreateSessionToken}, nil)
		for name, st := range streams {
			if r := st.Read(t, 10*time.Second); !r.Closed && !r.Complete {
				t.Errorf("%s after the revocation: %+v, want the end", name, r)
			}
		}
		waitSubscribers(t, s, 0)
	})
	t.Run("deleted session", func(t *testing.T) {
		st := s.SubscribeSSE(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{})
		ws := s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, vars, apptest.StreamOptions{})
		waitSubscribers(t, s, 2)
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sid}, nil)
		for name, st := range map[string]apptest.Stream{"sse": st, "graphql-transport-ws": ws} {
			if r := st.Read(t, 10*time.Second); !r.Complete {
				t.Errorf("%s after the deletion: %+v, want complete", name, r)
			}
		}
		waitSubscribers(t, s, 0)
	})
}

// TestEventsQuery: the events query pages the log in seq order (cursor =
// event id), filters by kind, and refuses a bad first or after naming the
// argument; a session the token does not reach is not found.
func TestEventsQuery(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, contact = apptest.LinkedPhone, "4915550013302"
	sendTexts(t, s.Network(t), contact, phone, "p1", "p2", "p3", "p4", "p5")
	waitInbound(t, s, sess.ID, 5)

	type page struct {
		Events struct {
			Edges []struct {
				Cursor string
				Node   gqlEvent
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	const q = `query($s: ID!, $k: [EventKind!], $a: String, $f: Int) {
  events(sessionId: $s, kinds: $k, after: $a, first: $f) { edges { cursor node { id seq kind sessionId occurredAt data } } pageInfo { hasNextPage endCursor } }
}`
	var all []gqlEvent
	var after any
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("paging does not end")
		}
		var p page
		s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "a": after, "f": 2}, &p)
		if len(p.Events.Edges) > 2 {
			t.Fatalf("%d edges for first: 2", len(p.Events.Edges))
		}
		for _, e := range p.Events.Edges {
			if e.Cursor != e.Node.ID {
				t.Errorf("cursor %s of event %s", e.Cursor, e.Node.ID)
			}
			all = append(all, e.Node)
		}
		if n := len(p.Events.Edges); n > 0 && (p.Events.PageInfo.EndCursor == nil || *p.Events.PageInfo.EndCursor != p.Events.Edges[n-1].Cursor) {
			t.Errorf("endCursor %v, last cursor %s", p.Events.PageInfo.EndCursor, p.Events.Edges[n-1].Cursor)
		}
		if !p.Events.PageInfo.HasNextPage {
			break
		}
		after = *p.Events.PageInfo.EndCursor
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.SessionID != sess.ID {
			t.Fatalf("event %d: seq %d of %s", i, e.Seq, e.SessionID)
		}
	}
	var inbound []gqlEvent
	for _, e := range all {
		if e.Kind == "INBOUND_MESSAGE_UPSERT" {
			inbound = append(inbound, e)
		}
	}
	if tx := texts(inbound); !slices.Equal(tx, []string{"p1", "p2", "p3", "p4", "p5"}) {
		t.Errorf("inbound texts %v", tx)
	}
	var p page
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "k": inboundOnly, "a": inbound[1].ID}, &p)
	if len(p.Events.Edges) != 3 || p.Events.Edges[0].Node.ID != inbound[2].ID || p.Events.PageInfo.HasNextPage {
		t.Errorf("inbound after p2: %+v", p.Events)
	}
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "a": all[len(all)-1].ID}, &p)
	if len(p.Events.Edges) != 0 || p.Events.PageInfo.HasNextPage || p.Events.PageInfo.EndCursor != nil {
		t.Errorf("after the last event: %+v", p.Events)
	}

	other := s.CreateSession(t, "other")
	var tok struct{ CreateSessionToken string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": other}, &tok)
	tests := []struct {
		name         string
		token        string
		vars         map[string]any
		code, field  string
		messageHasID bool
	}{
		{"first 0", apptest.AdminToken, map[string]any{"s": sess.ID, "f": 0}, "BAD_USER_INPUT", "first", false},
		{"first 501", apptest.AdminToken, map[string]any{"s": sess.ID, "f": 501}, "BAD_USER_INPUT", "first", false},
		{"unknown after", apptest.AdminToken, map[string]any{"s": sess.ID, "a": "evt_nope"}, "BAD_USER_INPUT", "after", false},
		{"another session's event", apptest.AdminToken, map[string]any{"s": other, "a": all[0].ID}, "BAD_USER_INPUT", "after", false},
		{"not reached", tok.CreateSessionToken, map[string]any{"s": sess.ID}, "NOT_FOUND", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.GraphQL(t, tt.token, q, tt.vars)
			if len(res.Errors) != 1 || res.Errors[0].Code() != tt.code || (tt.field != "" && res.Errors[0].Extensions["field"] != tt.field) {
				t.Fatalf("errors %+v, want %s naming %q", res.Errors, tt.code, tt.field)
			}
			if !strings.Contains(res.Errors[0].Message, tt.field) {
				t.Errorf("message %q does not name %s", res.Errors[0].Message, tt.field)
			}
		})
	}
	// The subscription refuses the same after.
	st := s.SubscribeWS(t, apptest.AdminToken, eventsSubscription, map[string]any{"s": sess.ID, "a": "evt_nope"}, apptest.StreamOptions{})
	r := st.Read(t, 10*time.Second)
	if len(r.Errors) != 1 || r.Errors[0].Code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "after" {
		t.Errorf("subscription with an unknown after: %+v", r)
	}
}
