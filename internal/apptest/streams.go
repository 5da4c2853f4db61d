package apptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Result is one message of a subscription as a client reads it: a result
// (Data, Errors), or its end: Complete (the server completed it), Closed
// (the connection ended: websocket close code, or the stream's end).
type Result struct {
	Data      json.RawMessage
	Errors    []GQLError
	Complete  bool
	Closed    bool
	CloseCode int    // websocket close code when Closed; 0 otherwise
	Reason    string // websocket close reason, or the read error
}

// Stream is a subscription over one of the three transports.
type Stream interface {
	// Read returns the next message, waiting up to timeout; a timeout
	// fails the test.
	Read(t testing.TB, timeout time.Duration) Result
	// Close ends the subscription from the client's side.
	Close()
}

// StreamOptions tune the client's connection.
type StreamOptions struct {
	// ReadBuffer, when set, is the client socket's receive buffer: a
	// client that stops reading then holds up the server's writes sooner.
	ReadBuffer int
}

func (o StreamOptions) dialer() *net.Dialer {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if o.ReadBuffer > 0 {
		// Before connect, so the window the client announces is small
		// from the start.
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.ReadBuffer)
			})
			return errors.Join(err, serr)
		}
	}
	return d
}

// wsStream is graphql-transport-ws or the legacy graphql-ws.
type wsStream struct {
	conn   *websocket.Conn
	legacy bool
}

// SubscribeWS starts a subscription over graphql-transport-ws with the
// token in connection_init; a refused init is the stream's first Result
// (Closed with its code).
func (s *Server) SubscribeWS(t testing.TB, token, query string, vars map[string]any, opts StreamOptions) Stream {
	t.Helper()
	return s.subscribeWebsocket(t, "graphql-transport-ws", token, query, vars, opts)
}

// SubscribeLegacyWS starts a subscription over the legacy graphql-ws
// protocol (subscriptions-transport-ws: start, data, complete).
func (s *Server) SubscribeLegacyWS(t testing.TB, token, query string, vars map[string]any, opts StreamOptions) Stream {
	t.Helper()
	return s.subscribeWebsocket(t, "graphql-ws", token, query, vars, opts)
}

func (s *Server) subscribeWebsocket(t testing.TB, protocol, token, query string, vars map[string]any, opts StreamOptions) Stream {
	t.Helper()
	ws := s.dialWebsocket(t, protocol, token, opts)
	ws.start(t, query, vars)
	return ws
}

// DialWebsocket opens a websocket to /graphql offering subprotocol, with
// header on the upgrade request, and nothing sent: for tests of the
// protocol itself. The test's end closes it; reads give up after 10 s.
func (s *Server) DialWebsocket(t testing.TB, subprotocol string, header http.Header) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", header)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// dialWebsocket connects with protocol and sends connection_init with
// token.
func (s *Server) dialWebsocket(t testing.TB, protocol, token string, opts StreamOptions) *wsStream {
	t.Helper()
	nd := opts.dialer()
	d := websocket.Dialer{Subprotocols: []string{protocol}, HandshakeTimeout: 5 * time.Second, NetDialContext: nd.DialContext}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", nil)
	if err != nil {
		t.Fatalf("dial %s: %v", protocol, err)
	}
	if conn.Subprotocol() != protocol {
		t.Fatalf("server chose subprotocol %q, want %q", conn.Subprotocol(), protocol)
	}
	t.Cleanup(func() { conn.Close() })
	ws := &wsStream{conn: conn, legacy: protocol == "graphql-ws"}
	ws.write(t, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": token}})
	return ws
}

// start sends the operation as subscription "1".
func (ws *wsStream) start(t testing.TB, query string, vars map[string]any) {
	t.Helper()
	start := "subscribe"
	if ws.legacy {
		start = "start"
	}
	ws.write(t, map[string]any{"id": "1", "type": start, "payload": map[string]any{"query": query, "variables": vars}})
}

// ack waits for connection_ack, skipping keep-alives; anything else fails
// the test.
func (ws *wsStream) ack(t testing.TB, timeout time.Duration) {
	t.Helper()
	_ = ws.conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		var m map[string]any
		if err := ws.conn.ReadJSON(&m); err != nil {
			t.Fatalf("websocket read: %v", err)
		}
		switch m["type"] {
		case "ping", "pong", "ka":
			continue
		case "connection_ack":
			return
		}
		t.Fatalf("connection_init answered %v", m)
	}
}

func (ws *wsStream) write(t testing.TB, v any) {
	t.Helper()
	if err := ws.conn.WriteJSON(v); err != nil {
		t.Fatalf("websocket write: %v", err)
	}
}

func (ws *wsStream) Read(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_ = ws.conn.SetReadDeadline(deadline)
		var m struct {
			Type    string          `json:"type"`
			ID      string          `json:"id"`
			Payload json.RawMessage `json:"payload"`
		}
		err := ws.conn.ReadJSON(&m)
		var ce *websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return Result{Closed: true, CloseCode: ce.Code, Reason: ce.Text}
		case err != nil && time.Now().After(deadline):
			t.Fatalf("no subscription message within %s", timeout)
		case err != nil:
			return Result{Closed: true, Reason: err.Error()}
		}
		switch m.Type {
		case "ping":
			// graphql-transport-ws: a ping unanswered closes the socket.
			if err := ws.conn.WriteJSON(map[string]any{"type": "pong"}); err != nil {
				return Result{Closed: true, Reason: err.Error()}
			}
			continue
		case "connection_ack", "pong", "ka":
			continue
		case "next", "data":
			var p struct {
				Data   json.RawMessage `json:"data"`
				Errors []GQLError      `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				t.Fatalf("%s payload %s: %v", m.Type, m.Payload, err)
			}
			return Result{Data: p.Data, Errors: p.Errors}
		case "error":
			var errs []GQLError
			if ws.legacy {
				var one GQLError
				if json.Unmarshal(m.Payload, &one) == nil && one.Message != "" {
					errs = []GQLError{one}
				}
			}
			if errs == nil {
				if err := json.Unmarshal(m.Payload, &errs); err != nil {
					t.Fatalf("error payload %s: %v", m.Payload, err)
				}
			}
			return Result{Errors: errs, Complete: true}
		case "complete":
			return Result{Complete: true}
		case "connection_error":
			return Result{Closed: true, Reason: string(m.Payload)}
		default:
			t.Fatalf("unexpected websocket message %q: %s", m.Type, m.Payload)
		}
	}
}

func (ws *wsStream) Close() { ws.conn.Close() }

// sseStream is graphql-sse's distinct connections mode: one POST whose
// response is the stream (event: next, event: complete).
type sseStream struct {
	res    *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
	lines  chan sseLine
}

type sseLine struct {
	text string
	err  error
}

// SubscribeSSE starts a subscription over server-sent events with the
// token in the Authorization header. A refusal before the stream (401) is
// the first Result: Closed, with the status in CloseCode and the body in
// Reason.
func (s *Server) SubscribeSSE(t testing.TB, token, query string, vars map[string]any, opts StreamOptions) Stream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	client := &http.Client{Transport: &http.Transport{DialContext: opts.dialer().DialContext}}
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("SSE request: %v", err)
	}
	st := &sseStream{res: res, cancel: cancel, lines: make(chan sseLine)}
	t.Cleanup(st.Close)
	if res.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		st.lines = nil
		return &refusedStream{Result{Closed: true, CloseCode: res.StatusCode, Reason: b.String()}}
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("SSE answered %s", ct)
	}
	st.sc = bufio.NewScanner(res.Body)
	st.sc.Buffer(make([]byte, 64<<10), 4<<20)
	go func() {
		defer close(st.lines)
		for st.sc.Scan() {
			select {
			case st.lines <- sseLine{text: st.sc.Text()}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case st.lines <- sseLine{err: fmt.Errorf("stream ended: %v", st.sc.Err())}:
		case <-ctx.Done():
		}
	}()
	return st
}

func (st *sseStream) Read(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	event := ""
	for {
		var l sseLine
		var ok bool
		select {
		case l, ok = <-st.lines:
		case <-timer.C:
			t.Fatalf("no SSE event within %s", timeout)
		}
		if !ok || l.err != nil {
			reason := "stream ended"
			if l.err != nil {
				reason = l.err.Error()
			}
			return Result{Closed: true, Reason: reason}
		}
		switch {
		case strings.HasPrefix(l.text, "event: "):
			event = strings.TrimPrefix(l.text, "event: ")
			if event == "complete" {
				return Result{Complete: true}
			}
		case strings.HasPrefix(l.text, "data: ") && event == "next":
			var p struct {
				Data   json.RawMessage `json:"data"`
				Errors []GQLError      `json:"errors"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l.text, "data: ")), &p); err != nil {
				t.Fatalf("SSE data %s: %v", l.text, err)
			}
			return Result{Data: p.Data, Errors: p.Errors}
		}
	}
}

func (st *sseStream) Close() {
	st.cancel()
	st.res.Body.Close()
}

// refusedStream is a subscription refused before it started.
type refusedStream struct{ r Result }

func (r *refusedStream) Read(testing.TB, time.Duration) Result { return r.r }
func (r *refusedStream) Close()                                {}
