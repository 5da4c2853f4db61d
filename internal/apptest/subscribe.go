package apptest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Subscription is a GraphQL subscription over graphql-transport-ws.
type Subscription struct {
	t    testing.TB
	conn *websocket.Conn
}

// Subscribe starts a subscription with token, as a browser client would.
func (s *Server) Subscribe(t testing.TB, token, query string, vars map[string]any) *Subscription {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	sub := &Subscription{t: t, conn: conn}
	sub.write(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": token}})
	if m := sub.read(); m["type"] != "connection_ack" {
		t.Fatalf("connection_init answered %v", m)
	}
	sub.write(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	return sub
}

func (sub *Subscription) write(v any) {
	sub.t.Helper()
	if err := sub.conn.WriteJSON(v); err != nil {
		sub.t.Fatalf("websocket write: %v", err)
	}
}

func (sub *Subscription) read() map[string]any {
	sub.t.Helper()
	for {
		_ = sub.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		var m map[string]any
		if err := sub.conn.ReadJSON(&m); err != nil {
			sub.t.Fatalf("websocket read: %v", err)
		}
		if m["type"] != "ping" && m["type"] != "pong" && m["type"] != "ka" {
			return m
		}
	}
}

// Next waits for the next result and decodes its data into v; an error or
// the end of the subscription fails the test.
func (sub *Subscription) Next(v any) {
	sub.t.Helper()
	m := sub.read()
	if m["type"] != "next" {
		sub.t.Fatalf("subscription sent %v", m)
	}
	payload, _ := m["payload"].(map[string]any)
	if errs := payload["errors"]; errs != nil {
		sub.t.Fatalf("subscription errors: %v", errs)
	}
	b, _ := json.Marshal(payload["data"])
	if err := json.Unmarshal(b, v); err != nil {
		sub.t.Fatalf("subscription data %s: %v", b, err)
	}
}

// Close ends the subscription.
func (sub *Subscription) Close() { sub.conn.Close() }
