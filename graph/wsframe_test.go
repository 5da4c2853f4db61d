package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// gqlgenShape has the shape of gqlgen's websocket messages.
type gqlgenShape struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	noOp    bool
}

// TestAppendResult: a result is framed as encoding/json frames it; any other
// message, or a shape that is not gqlgen's, is left to encoding/json.
func TestAppendResult(t *testing.T) {
	type otherTag struct {
		Payload json.RawMessage `json:"data,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
	}
	type extra struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		More    string          `json:"more"`
	}
	payload := json.RawMessage(`{"data":{"events":{"id":"evt_1","data":{"text":"hi"}}}}`)
	tests := []struct {
		name string
		v    any
		ok   bool
	}{
		{"next", &gqlgenShape{Payload: payload, ID: "1", Type: "next"}, true},
		{"data of graphql-ws", &gqlgenShape{Payload: payload, ID: "sub-7", Type: "data"}, true},
		{"no id", &gqlgenShape{Payload: payload, Type: "next"}, true},
		{"id to escape", &gqlgenShape{Payload: payload, ID: `a"b`, Type: "next"}, false},
		{"id with html", &gqlgenShape{Payload: payload, ID: "<x>", Type: "next"}, false},
		{"id not ascii", &gqlgenShape{Payload: payload, ID: "é", Type: "next"}, false},
		{"complete", &gqlgenShape{ID: "1", Type: "complete"}, false},
		{"error", &gqlgenShape{Payload: json.RawMessage(`[{"message":"x"}]`), ID: "1", Type: "error"}, false},
		{"next without payload", &gqlgenShape{ID: "1", Type: "next"}, false},
		{"not a pointer", gqlgenShape{Payload: payload, ID: "1", Type: "next"}, false},
		{"nil", (*gqlgenShape)(nil), false},
		{"another tag", &otherTag{Payload: payload, ID: "1", Type: "next"}, false},
		{"another field", &extra{Payload: payload, ID: "1", Type: "next"}, false},
		{"a map", &map[string]any{"type": "next"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := appendResult([]byte("stale"), tt.v, nil)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "stale"+string(want) {
				t.Fatalf("frame\n%s\nwant (after the kept bytes)\n%s", got, want)
			}
		})
	}
}

// recordingConn keeps what gqlgen hands the connection.
type recordingConn struct {
	transport.WebsocketConn
	got chan any
}

func (c *recordingConn) WriteJSON(v any) error {
	select {
	case c.got <- v:
	default:
	}
	return c.WebsocketConn.WriteJSON(v)
}

type recordingImplementation struct {
	gorillaImplementation
	got chan any
}

func (r recordingImplementation) Accept(w http.ResponseWriter, req *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := r.gorillaImplementation.Accept(w, req, opts)
	if err != nil {
		return nil, err
	}
	return &recordingConn{WebsocketConn: c, got: r.got}, nil
}

// TestAppendResultOfGqlgen: the result message gqlgen really sends (here a
// subscription refused for want of a token, a result with errors) takes the
// direct frame, and the client reads the bytes encoding/json would have
// written.
func TestAppendResultOfGqlgen(t *testing.T) {
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		t.Run(protocol, func(t *testing.T) {
			got := make(chan any, 16)
			srv := handler.New(NewExecutableSchema(Config{Resolvers: &Resolver{}}))
			srv.AddTransport(transport.Websocket{Implementation: recordingImplementation{gorillaImplementation{initTimeout: time.Minute}, got}})
			ts := httptest.NewServer(srv)
			defer ts.Close()

			d := websocket.Dialer{Subprotocols: []string{protocol}}
			conn, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := "subscribe"
			if protocol == "graphql-ws" {
				start = "start"
			}
			for _, m := range []any{
				map[string]any{"type": "connection_init"},
				map[string]any{"id": "s1", "type": start, "payload": map[string]any{"query": `subscription { events(sessionId: "x") { id } }`}},
			} {
				if err := conn.WriteJSON(m); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for {
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, b, err := conn.ReadMessage()
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				var m struct{ Type string }
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if m.Type != "next" && m.Type != "data" {
					continue
				}
				var v any
				for v == nil {
					select {
					case w := <-got:
						// gqlgen knows the operation by an id of the
						// socket's own (opIDs), the client by s1.
						if f, ok := appendResult(nil, w, func(string) string { return "s1" }); ok {
							if string(f) != string(b) {
								t.Fatalf("frame %s, client read %s", f, b)
							}
							v = w
						}
					case <-ctx.Done():
						t.Fatalf("the result %s was not one appendResult frames", b)
					}
				}
				want, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				want = bytes.Replace(want, []byte(`"id":"1"`), []byte(`"id":"s1"`), 1)
				if string(want) != string(b) {
					t.Fatalf("client read %s, encoding/json writes %s", b, want)
				}
				if !strings.Contains(string(b), `"errors"`) {
					t.Fatalf("want the refusal's errors in %s", b)
				}
				return
			}
		})
	}
}
