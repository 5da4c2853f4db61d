package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

// TestEventLaneSameBytes: a subscription that takes the lane (a plain
// selection) reads the very bytes gqlgen writes for the same selection
// through a fragment (which gqlgen executes): aliases, __typename, each
// scalar's form, the order; for each subscriber of the event.
func TestEventLaneSameBytes(t *testing.T) {
	s := apptest.Start(t, apptest.Config(t))
	sess := s.CreateSession(t, "lane")
	fields := `__typename id seq kind sessionId occurredAt data k: kind when: occurredAt`
	queries := []string{
		`subscription($s: ID!) { ev: events(sessionId: $s) { ` + fields + ` } }`,                  // the lane
		`subscription($s: ID!) { ev: events(sessionId: $s) { ... on Event { ` + fields + ` } } }`, // gqlgen
		`subscription($s: ID!) { ev: events(sessionId: $s) { ` + fields + ` } }`,                  // the lane, a second subscriber
	}
	conns := make([]*websocket.Conn, len(queries))
	for i, q := range queries {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		c, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, m := range []any{
			map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": apptest.AdminToken}},
			map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": q, "variables": map[string]any{"s": sess}}},
		} {
			if err := c.WriteJSON(m); err != nil {
				t.Fatal(err)
			}
		}
		conns[i] = c
	}
	for deadline := time.Now().Add(10 * time.Second); s.App.Bus().Subscribers() < len(queries); {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers, want %d", s.App.Bus().Subscribers(), len(queries))
		}
		time.Sleep(5 * time.Millisecond)
	}
	data := json.RawMessage(`{"id":"3EB0","chat":"491701234567@s.whatsapp.net","type":"text","text":"Grüße <b> & \"quotes\" \u2028"}`)
	if _, err := s.App.Bus().Publish(context.Background(), sess, []events.New{
		{Kind: events.InboundMessageUpsert, Data: data},
		{Kind: events.ChatsUpsert, Data: json.RawMessage(`{"id":"491701234567@s.whatsapp.net"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		var frames []string
		for _, c := range conns {
			frames = append(frames, readNext(t, c))
		}
		if frames[0] != frames[1] || frames[2] != frames[1] {
			t.Fatalf("event %d: the lane wrote\n%s\n%s\ngqlgen\n%s", n, frames[0], frames[2], frames[1])
		}
		if !strings.Contains(frames[0], `"__typename":"Event"`) || !strings.Contains(frames[0], `"k":"`) {
			t.Fatalf("event %d: %s lacks a field", n, frames[0])
		}
	}
}

// readNext reads the next "next" message's bytes.
func readNext(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	for {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m struct{ Type string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case "next":
			return string(b)
		case "complete", "error":
			t.Fatalf("stream ended: %s", b)
		}
	}
}
