package apptest

import (
	"encoding/json"
	"testing"
	"time"
)

// Subscription is a GraphQL subscription over graphql-transport-ws whose
// every message must be a result: the short form of SubscribeWS for tests
// that only read data.
type Subscription struct {
	t  testing.TB
	ws *wsStream
}

// subscriptionWait bounds the wait for each next result.
const subscriptionWait = 20 * time.Second

// Subscribe starts a subscription with token, as a browser client would;
// a connection_init that is not acknowledged fails the test.
func (s *Server) Subscribe(t testing.TB, token, query string, vars map[string]any) *Subscription {
	t.Helper()
	ws := s.dialWebsocket(t, "graphql-transport-ws", token, StreamOptions{})
	ws.ack(t, subscriptionWait)
	ws.start(t, query, vars)
	return &Subscription{t: t, ws: ws}
}

// Next waits for the next result and decodes its data into v; an error or
// the end of the subscription fails the test.
func (sub *Subscription) Next(v any) {
	sub.t.Helper()
	r := sub.ws.Read(sub.t, subscriptionWait)
	switch {
	case r.Closed:
		sub.t.Fatalf("websocket read: closed %d %s", r.CloseCode, r.Reason)
	case len(r.Errors) > 0:
		sub.t.Fatalf("subscription errors: %+v", r.Errors)
	case r.Complete:
		sub.t.Fatal("subscription sent complete")
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		sub.t.Fatalf("subscription data %s: %v", r.Data, err)
	}
}

// Close ends the subscription.
func (sub *Subscription) Close() { sub.ws.Close() }
