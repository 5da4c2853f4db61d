package graph

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// TestWebsocketInitTimeout: a socket that sends no connection_init is closed
// with 4408, as graphql-transport-ws asks.
func TestWebsocketInitTimeout(t *testing.T) {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: &Resolver{}}))
	srv.AddTransport(transport.Websocket{Implementation: gorillaImplementation{initTimeout: 50 * time.Millisecond}})
	ts := httptest.NewServer(srv)
	defer ts.Close()

	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = conn.ReadMessage()
	var ce *websocket.CloseError
	if !errorsAs(err, &ce) || ce.Code != closeInitTimeout || ce.Text != "Connection initialisation timeout" {
		t.Fatalf("read: %v; want close %d with the protocol's reason", err, closeInitTimeout)
	}
}

// TestWebsocketInitToken: the token of a connection_init is found where
// the client libraries put it; a payload that cannot hold one is named.
func TestWebsocketInitToken(t *testing.T) {
	tests := []struct {
		name, payload, token, problem string
	}{
		{"Authorization", `{"Authorization":"Bearer wgu_a"}`, "wgu_a", ""},
		{"without the scheme", `{"Authorization":"wgu_a"}`, "wgu_a", ""},
		{"lower case", `{"authorization":"bearer wgu_a"}`, "wgu_a", ""},
		{"token", `{"token":"wgu_a"}`, "wgu_a", ""},
		{"Apollo's headers", `{"headers":{"Authorization":"Bearer wgu_a"}}`, "wgu_a", ""},
		{"headers, lower case", `{"headers":{"authorization":"Bearer wgu_a"}}`, "wgu_a", ""},
		{"the top level first", `{"Authorization":"wgu_a","headers":{"Authorization":"wgu_b"}}`, "wgu_a", ""},
		{"an empty one skipped", `{"Authorization":"","headers":{"Authorization":"wgu_b"}}`, "wgu_b", ""},
		{"none", `{}`, "", ""},
		{"null headers", `{"headers":null}`, "", ""},
		{"a number", `{"Authorization":1}`, "", "connection_init payload: Authorization must be a string"},
		{"headers a string", `{"headers":"wgu_a"}`, "", "connection_init payload: headers must be an object"},
		{"a number in headers", `{"headers":{"authorization":true}}`, "", "connection_init payload: headers.authorization must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p transport.InitPayload
			if err := json.Unmarshal([]byte(tt.payload), &p); err != nil {
				t.Fatal(err)
			}
			tok, problem := initToken(p)
			if tok != tt.token || problem != tt.problem {
				t.Errorf("initToken(%s) = %q, %q; want %q, %q", tt.payload, tok, problem, tt.token, tt.problem)
			}
		})
	}
}

// TestWebsocketCloseReasonFits: a close reason longer than a close frame
// holds is clipped rather than failing the close (4409's quotes the
// client's id); a client's message type is quoted clipped.
func TestWebsocketCloseReasonFits(t *testing.T) {
	long := strings.Repeat("é", 200)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := gorillaImplementation{initTimeout: time.Minute}.Accept(w, r, transport.WebsocketAcceptOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		if err := c.WriteClose(closeSubscriberIn, "Subscriber for "+long+" already exists"); err != nil {
			t.Errorf("WriteClose: %v", err)
		}
	}))
	defer ts.Close()
	read := func() *websocket.CloseError {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), http.Header{})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err = conn.ReadMessage()
		var ce *websocket.CloseError
		if !errorsAs(err, &ce) {
			t.Fatalf("read: %v; want a close frame", err)
		}
		return ce
	}
	ce := read()
	if ce.Code != closeSubscriberIn || len(ce.Text) > maxCloseReason || !strings.HasPrefix(ce.Text, "Subscriber for éé") || !strings.HasSuffix(ce.Text, "é…") {
		t.Errorf("closed with %d %q (%d bytes)", ce.Code, ce.Text, len(ce.Text))
	}
	if got, want := quoteType(long), `"`+strings.Repeat("é", 16)+`…"`; got != want {
		t.Errorf("quoteType = %s, want %s", got, want)
	}
}

func errorsAs(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}

// TestWebsocketIDReusedAtOnce: a client may use an operation's id again as
// soon as it has completed it. gqlgen forgets an operation only after it
// has sent its complete, so an id used again at once had the new
// operation forgotten in its place: its complete was ignored, and the
// subscription ran on, unseen, until the socket closed.
func TestWebsocketIDReusedAtOnce(t *testing.T) {
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		t.Run(protocol, func(t *testing.T) {
			srv := testserver.New()
			srv.AddTransport(transport.Websocket{Implementation: gorillaImplementation{initTimeout: time.Minute}})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			d := websocket.Dialer{Subprotocols: []string{protocol}}
			conn, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start, stop := "subscribe", "complete"
			if protocol == "graphql-ws" {
				start, stop = "start", "stop"
			}
			const rounds = 200
			msgs := []string{`{"type":"connection_init"}`}
			for range rounds {
				msgs = append(msgs,
					`{"id":"s","type":"`+start+`","payload":{"query":"subscription { name }"}}`,
					`{"id":"s","type":"`+stop+`"}`)
			}
			for _, m := range msgs {
				if err := conn.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			completes := 0
			for completes < rounds {
				var m struct{ Type, ID string }
				if err := conn.ReadJSON(&m); err != nil {
					t.Fatalf("after %d of %d completes: %v", completes, rounds, err)
				}
				switch m.Type {
				case "complete":
					if m.ID != "s" {
						t.Fatalf("complete of %q, want the client's id s", m.ID)
					}
					completes++
				case "connection_ack", "ka", "ping", "pong":
				default:
					t.Fatalf("unexpected %+v", m)
				}
			}
		})
	}
}
