package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
)

func dialGraphQL(t *testing.T, srv *apptest.Server, subprotocol string, header http.Header) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return conn
}

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

// TestWebsocketAuth: both websocket protocols authenticate in
// connection_init (or by the upgrade's Authorization header) and run
// operations as that principal; a bad token is closed with 4403.
func TestWebsocketAuth(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	tests := []struct {
		name, proto, init string
		header            http.Header
		wantClose         int
	}{
		{"transport-ws, token in payload", "graphql-transport-ws", `{"type":"connection_init","payload":{"Authorization":"` + apptest.AdminToken + `"}}`, nil, 0},
		{"transport-ws, token key", "graphql-transport-ws", `{"type":"connection_init","payload":{"token":"Bearer ` + apptest.AdminToken + `"}}`, nil, 0},
		{"transport-ws, header", "graphql-transport-ws", `{"type":"connection_init"}`, http.Header{"Authorization": {apptest.AdminToken}}, 0},
		{"legacy graphql-ws, lower-case key", "graphql-ws", `{"type":"connection_init","payload":{"authorization":"` + apptest.AdminToken + `"}}`, nil, 0},
		{"bad token", "graphql-transport-ws", `{"type":"connection_init","payload":{"Authorization":"wgu_bad"}}`, nil, 4403},
		{"no token", "graphql-transport-ws", `{"type":"connection_init","payload":{}}`, nil, 4403},
		{"bad header token", "graphql-ws", `{"type":"connection_init"}`, http.Header{"Authorization": {"wgu_bad"}}, 4403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialGraphQL(t, srv, tt.proto, tt.header)
			send(t, c, tt.init)
			m, err := next(t, c)
			if tt.wantClose != 0 {
				for err == nil { // a connection_error may come first
					m, err = next(t, c)
				}
				ce, ok := err.(*websocket.CloseError)
				if !ok || ce.Code != tt.wantClose {
					t.Fatalf("got %v (%v), want close %d", err, m, tt.wantClose)
				}
				return
			}
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

// TestWebsocketEndsWithItsToken: revoking a token, or deleting the session
// of a session token, closes the sockets it opened at once.
func TestWebsocketEndsWithItsToken(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	newSession := func() (string, string) {
		var r struct {
			CreateSession struct {
				Session struct{ ID string }
				Token   string
			}
		}
		srv.MustGraphQL(t, admin, `mutation { createSession(name: "ws") { session { id } token } }`, nil, &r)
		return r.CreateSession.Session.ID, r.CreateSession.Token
	}
	open := func(tok string) *websocket.Conn {
		c := dialGraphQL(t, srv, "graphql-transport-ws", nil)
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
