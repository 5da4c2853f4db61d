package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSubscriptionsAreCapped: one socket carries at most
// graph.MaxSubscriptionsPerSocket subscriptions and one token at most
// graph.MaxSubscriptionsPerToken over all its sockets and streams; past
// them a subscription is refused with RATE_LIMITED naming the bound, and a
// completed one frees its place. On main before this change nothing bounded
// them: 80 replays on one socket that never read held 2 GB.
func TestSubscriptionsAreCapped(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	var r struct {
		CreateSession struct {
			Session struct{ ID string }
			Token   string
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "capped") { session { id } token } }`, nil, &r)
	tok, sid := r.CreateSession.Token, r.CreateSession.Session.ID
	subscribe := func(c *websocket.Conn, id int) {
		t.Helper()
		send(t, c, fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription($s: ID!) { events(sessionId: $s) { id } }","variables":{"s":%q}}}`, id, sid))
	}
	waitSubscribers := func(n int) {
		t.Helper()
		for i := 0; srv.App.Bus().Subscribers() != n; i++ {
			if i == 400 {
				t.Fatalf("%d subscribers, want %d", srv.App.Bus().Subscribers(), n)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	refused := func(c *websocket.Conn, id int, want string) {
		t.Helper()
		subscribe(c, id)
		m, err := next(t, c)
		if err != nil {
			t.Fatalf("subscription %d: %v", id, err)
		}
		// graphql-transport-ws carries a resolver's refusal as a result
		// with errors (then complete).
		p, _ := m["payload"].(map[string]any)
		errs, _ := p["errors"].([]any)
		if m["type"] != "next" || m["id"] != fmt.Sprint(id) || len(errs) != 1 || p["data"] != nil {
			t.Fatalf("subscription %d past the bound: %v, want one error", id, m)
		}
		if m, err := next(t, c); err != nil || m["type"] != "complete" {
			t.Fatalf("after the refusal: %v %v, want complete", m, err)
		}
		e, _ := errs[0].(map[string]any)
		ext, _ := e["extensions"].(map[string]any)
		if ext["code"] != "RATE_LIMITED" || e["message"] != want {
			t.Errorf("refusal %v, want RATE_LIMITED %q", e, want)
		}
	}

	socket := openSocket(t, srv, tok)
	for i := range graph.MaxSubscriptionsPerSocket {
		subscribe(socket, i+1)
	}
	waitSubscribers(graph.MaxSubscriptionsPerSocket)
	perSocket := fmt.Sprintf("too many subscriptions on this connection: at most %d at once; complete one first", graph.MaxSubscriptionsPerSocket)
	refused(socket, 100, perSocket)
	// Completing one frees its place.
	send(t, socket, `{"id":"1","type":"complete"}`)
	waitSubscribers(graph.MaxSubscriptionsPerSocket - 1)
	subscribe(socket, 101)
	waitSubscribers(graph.MaxSubscriptionsPerSocket)

	// The token's bound, over other sockets and an SSE stream.
	open := graph.MaxSubscriptionsPerSocket
	var last *websocket.Conn
	lastN := 0 // subscriptions on last
	for open < graph.MaxSubscriptionsPerToken-1 {
		last, lastN = openSocket(t, srv, tok), 0
		for ; lastN < graph.MaxSubscriptionsPerSocket && open < graph.MaxSubscriptionsPerToken-1; lastN++ {
			subscribe(last, lastN+1)
			open++
		}
	}
	sse := srv.SubscribeSSE(t, tok, `subscription($s: ID!) { events(sessionId: $s) { id } }`, map[string]any{"s": sid}, apptest.StreamOptions{})
	defer sse.Close()
	waitSubscribers(graph.MaxSubscriptionsPerToken)
	fresh := openSocket(t, srv, tok)
	refused(fresh, 1, fmt.Sprintf("too many subscriptions for this token: at most %d at once over all its connections; complete one first", graph.MaxSubscriptionsPerToken))
	if res := srv.SubscribeSSE(t, tok, `subscription($s: ID!) { events(sessionId: $s) { id } }`, map[string]any{"s": sid}, apptest.StreamOptions{}).Read(t, 10*time.Second); len(res.Errors) == 0 || res.Errors[0].Code() != "RATE_LIMITED" {
		t.Errorf("an SSE subscription past the token's bound: %+v, want RATE_LIMITED", res)
	}
	// Another token of the same user is not held by this one's bound.
	other := openSocket(t, srv, apptest.AdminToken)
	subscribe(other, 1)
	waitSubscribers(graph.MaxSubscriptionsPerToken + 1)
	// Closing a socket frees what it held.
	last.Close()
	waitSubscribers(graph.MaxSubscriptionsPerToken + 1 - lastN)
	subscribe(fresh, 2)
	if m, err := next(t, fresh); err == nil && m["type"] == "error" {
		t.Errorf("a subscription after others ended was refused: %v", m)
	}
}
