package graph

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
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
	if !errorsAs(err, &ce) || ce.Code != closeInitTimeout {
		t.Fatalf("read: %v; want close %d", err, closeInitTimeout)
	}
}

func errorsAs(err error, target **websocket.CloseError) bool {
	ce, ok := err.(*websocket.CloseError)
	if ok {
		*target = ce
	}
	return ok
}
