package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
)

func send(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// next reads messages until one of a type other than keep-alives arrives.
func next(t *testing.T, c *websocket.Conn) (map[string]any, error) {
	t.Helper()
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("not JSON: %s", b)
		}
		if m["type"] != "ka" && m["type"] != "ping" && m["type"] != "pong" {
			return m, nil
		}
	}
}

// closeOf reads until the socket closes (a connection_error may come
// first on graphql-ws) and returns its close frame.
func closeOf(t *testing.T, c *websocket.Conn) *websocket.CloseError {
	t.Helper()
	for {
		m, err := next(t, c)
		if err == nil {
			if m["type"] == "connection_ack" {
				t.Fatalf("got connection_ack, want the socket closed")
			}
			continue
		}
		ce, ok := err.(*websocket.CloseError)
		if !ok {
			t.Fatalf("got %v, want a close frame", err)
		}
		return ce
	}
}

// TestWebsocketAuth: both websocket protocols authenticate in
// connection_init, with the token where the client libraries put it
// ({"Authorization": …}, "authorization", "token", or Apollo's
// {"headers": {"Authorization": …}}), or by the upgrade's Authorization
// header, and run operations as that principal. Each refusal closes with
// the protocol's code and a reason that says what to send instead.
func TestWebsocketAuth(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	const (
		noToken  = `Forbidden: no valid token in connection_init (send {"Authorization":"Bearer <token>"})`
		badToken = "Forbidden: invalid or revoked token"
	)
	tok := apptest.AdminToken
	tests := []struct {
		name, proto, init string
		header            http.Header
		wantClose         int
		wantReason        string
	}{
		{"transport-ws, token in payload", "graphql-transport-ws", `{"type":"connection_init","payload":{"Authorization":"` + tok + `"}}`, nil, 0, ""},
		{"transport-ws, token key", "graphql-transport-ws", `{"type":"connection_init","payload":{"token":"Bearer ` + tok + `"}}`, nil, 0, ""},
		{"transport-ws, Apollo's headers", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":{"Authorization":"Bearer ` + tok + `"}}}`, nil, 0, ""},
		{"transport-ws, headers lower-case", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":{"authorization":"` + tok + `"}}}`, nil, 0, ""},
		{"transport-ws, header", "graphql-transport-ws", `{"type":"connection_init"}`, http.Header{"Authorization": {tok}}, 0, ""},
		{"legacy graphql-ws, lower-case key", "graphql-ws", `{"type":"connection_init","payload":{"authorization":"` + tok + `"}}`, nil, 0, ""},
		{"legacy graphql-ws, Apollo's headers", "graphql-ws", `{"type":"connection_init","payload":{"headers":{"Authorization":"Bearer ` + tok + `"}}}`, nil, 0, ""},

		{"bad token", "graphql-transport-ws", `{"type":"connection_init","payload":{"Authorization":"wgu_bad"}}`, nil, 4403, badToken},
		{"bad token in headers", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":{"Authorization":"Bearer wgu_bad"}}}`, nil, 4403, badToken},
		{"legacy, bad token", "graphql-ws", `{"type":"connection_init","payload":{"Authorization":"wgu_bad"}}`, nil, 4403, badToken},
		{"no token", "graphql-transport-ws", `{"type":"connection_init","payload":{}}`, nil, 4403, noToken},
		{"no payload", "graphql-transport-ws", `{"type":"connection_init"}`, nil, 4403, noToken},
		{"empty headers", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":{}}}`, nil, 4403, noToken},
		{"bad header token", "graphql-ws", `{"type":"connection_init"}`, http.Header{"Authorization": {"wgu_bad"}}, 4403, noToken},
		{"token not a string", "graphql-transport-ws", `{"type":"connection_init","payload":{"Authorization":42}}`, nil, 4400,
			"Bad request: connection_init payload: Authorization must be a string"},
		{"headers' token not a string", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":{"Authorization":["x"]}}}`, nil, 4400,
			"Bad request: connection_init payload: headers.Authorization must be a string"},
		{"headers not an object", "graphql-transport-ws", `{"type":"connection_init","payload":{"headers":"Bearer x"}}`, nil, 4400,
			"Bad request: connection_init payload: headers must be an object"},
		{"payload not an object", "graphql-transport-ws", `{"type":"connection_init","payload":"` + tok + `"}`, nil, 4400,
			`Bad request: connection_init payload must be a JSON object such as {"Authorization":"Bearer <token>"}`},
		{"not JSON", "graphql-transport-ws", `connection_init`, nil, 4400,
			`Bad request: a message must be a JSON object with a type, such as {"type":"connection_init"}`},
		{"subscribe first", "graphql-transport-ws", `{"id":"1","type":"subscribe","payload":{"query":"{ viewer { user { name } } }"}}`, nil, 4401,
			"Unauthorized: send connection_init with a token before subscribe"},
		{"legacy, start first", "graphql-ws", `{"id":"1","type":"start","payload":{"query":"{ viewer { user { name } } }"}}`, nil, 4401,
			"Unauthorized: send connection_init with a token before start"},
		{"another message first", "graphql-transport-ws", `{"type":"hello"}`, nil, 4400,
			`Bad request: the first message must be connection_init, not "hello"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.DialWebsocket(t, tt.proto, tt.header)
			send(t, c, tt.init)
			if tt.wantClose != 0 {
				ce := closeOf(t, c)
				if ce.Code != tt.wantClose || ce.Text != tt.wantReason {
					t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Text, tt.wantClose, tt.wantReason)
				}
				return
			}
			m, err := next(t, c)
			if err != nil || m["type"] != "connection_ack" {
				t.Fatalf("got %v %v, want connection_ack", m, err)
			}
			start := `{"id":"1","type":"subscribe","payload":{"query":"{ viewer { user { name admin } } }"}}`
			dataType := "next"
			if tt.proto == "graphql-ws" {
				start = strings.Replace(start, "subscribe", "start", 1)
				dataType = "data"
			}
			send(t, c, start)
			m, err = next(t, c)
			if err != nil || m["type"] != dataType {
				t.Fatalf("got %v %v, want %s", m, err, dataType)
			}
			b, _ := json.Marshal(m["payload"])
			if !strings.Contains(string(b), `{"viewer":{"user":{"admin":true,"name":"admin"}}}`) {
				t.Errorf("payload %s is not the admin viewer", b)
			}
		})
	}
}

// TestWebsocketProtocolRefusals: after the connection_init, what
// graphql-transport-ws forbids closes the socket with its code and reason
// (gqlgen alone sends 1002 "unexpected message", 1000 "terminated" or
// nothing); a ping before the connection_init is answered, as the protocol
// allows it.
func TestWebsocketProtocolRefusals(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sessionID := srv.CreateSession(t, "ws-protocol")
	initMsg := `{"type":"connection_init","payload":{"Authorization":"Bearer ` + apptest.AdminToken + `"}}`
	watch := func(id string) string {
		return `{"id":"` + id + `","type":"subscribe","payload":{"query":"subscription { sessionStatus(sessionId: \"` + sessionID + `\") { status } }"}}`
	}
	tests := []struct {
		name       string
		msgs       []string
		wantClose  int
		wantReason string
	}{
		{"a second connection_init", []string{initMsg}, 4429, "Too many initialisation requests"},
		{"an id in use", []string{watch("w"), watch("w")}, 4409, "Subscriber for w already exists"},
		{"subscribe without an id", []string{`{"type":"subscribe","payload":{"query":"{ sandboxMode }"}}`}, 4400, "Bad request: subscribe needs an id"},
		{"an unknown type", []string{`{"type":"start","id":"1"}`}, 4400, `Bad request: unknown message type "start"`},
		{"not JSON", []string{`{`}, 4400, `Bad request: a message must be a JSON object with a type, such as {"type":"connection_init"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
			send(t, c, initMsg)
			if m, err := next(t, c); err != nil || m["type"] != "connection_ack" {
				t.Fatalf("init: %v %v", m, err)
			}
			for _, m := range tt.msgs {
				send(t, c, m)
			}
			ce := closeOf(t, c)
			if ce.Code != tt.wantClose || ce.Text != tt.wantReason {
				t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Text, tt.wantClose, tt.wantReason)
			}
		})
	}

	t.Run("an id free again", func(t *testing.T) {
		c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
		send(t, c, initMsg)
		if m, err := next(t, c); err != nil || m["type"] != "connection_ack" {
			t.Fatalf("init: %v %v", m, err)
		}
		for i := range 2 { // completed by the client, confirmed by the server
			send(t, c, watch("w"))
			if m, err := next(t, c); err != nil || m["type"] != "next" || m["id"] != "w" {
				t.Fatalf("subscription %d: %v %v", i, m, err)
			}
			send(t, c, `{"id":"w","type":"complete"}`)
			if m, err := next(t, c); err != nil || m["type"] != "complete" || m["id"] != "w" {
				t.Fatalf("subscription %d after its complete: %v %v", i, m, err)
			}
		}
		send(t, c, `{"id":"q","type":"subscribe","payload":{"query":"{ sandboxMode }"}}`)
		for _, want := range []string{"next", "complete"} {
			if m, err := next(t, c); err != nil || m["type"] != want || m["id"] != "q" {
				t.Fatalf("query: %v %v, want %s", m, err, want)
			}
		}
		send(t, c, `{"id":"q","type":"subscribe","payload":{"query":"{ sandboxMode }"}}`)
		if m, err := next(t, c); err != nil || m["type"] != "next" || m["id"] != "q" {
			t.Fatalf("the query's id used again: %v %v", m, err)
		}
	})

	t.Run("a ping before connection_init", func(t *testing.T) {
		c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
		send(t, c, `{"type":"ping"}`)
		if m, err := next2(t, c); err != nil || m["type"] != "pong" {
			t.Fatalf("ping: %v %v, want pong", m, err)
		}
		send(t, c, initMsg)
		if m, err := next(t, c); err != nil || m["type"] != "connection_ack" {
			t.Fatalf("init after a ping: %v %v", m, err)
		}
	})
}

// next2 reads the next message, whatever its type.
func next2(t *testing.T, c *websocket.Conn) (map[string]any, error) {
	t.Helper()
	_, b, err := c.ReadMessage()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return m, nil
}

// TestWebsocketEndsWithItsToken: revoking a token, or deleting the session
// of a session token, closes the sockets it opened at once.
func TestWebsocketEndsWithItsToken(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	n := 0
	newSession := func() (string, string) {
		n++
		var r struct {
			CreateSession struct {
				Session struct{ ID string }
				Token   string
			}
		}
		srv.MustGraphQL(t, admin, `mutation($n: String) { createSession(name: $n) { session { id } token } }`, map[string]any{"n": fmt.Sprintf("ws %d", n)}, &r)
		return r.CreateSession.Session.ID, r.CreateSession.Token
	}
	open := func(tok string) *websocket.Conn {
		c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
		send(t, c, `{"type":"connection_init","payload":{"Authorization":"`+tok+`"}}`)
		if m, err := next(t, c); err != nil || m["type"] != "connection_ack" {
			t.Fatalf("init: %v %v", m, err)
		}
		return c
	}
	waitClosed := func(c *websocket.Conn) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, err := next(t, c); err != nil {
				if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
					t.Fatalf("socket still open 5 s after its token ended")
				}
				// The client learns why.
				if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4403 || ce.Text != "Forbidden: the token was revoked, or its session deleted" {
					t.Fatalf("closed with %v, want 4403 %q", err, "Forbidden: the token was revoked, or its session deleted")
				}
				return
			}
		}
	}

	_, tok := newSession()
	c := open(tok)
	srv.MustGraphQL(t, admin, `mutation($t: String!) { revokeToken(token: $t) }`, map[string]any{"t": tok}, nil)
	waitClosed(c)

	sid, tok2 := newSession()
	c2 := open(tok2)
	srv.MustGraphQL(t, admin, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sid}, nil)
	waitClosed(c2)

	// A socket of another token is not affected.
	_, tok3 := newSession()
	c3 := open(tok3)
	send(t, c3, `{"id":"1","type":"subscribe","payload":{"query":"{ viewer { session { id } } }"}}`)
	if m, err := next(t, c3); err != nil || m["type"] != "next" {
		t.Fatalf("unrelated socket: %v %v", m, err)
	}
}
