package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// fanoutQuery is what each subscriber follows: a session's inbound
// messages, with the fields a client of the stream would read.
const fanoutQuery = `subscription($s: ID!) { events(sessionId: $s, kinds: [INBOUND_MESSAGE_UPSERT]) { id seq kind occurredAt data } }`

// subscriber is one graphql-transport-ws connection following the
// session's events.
type subscriber struct {
	conn   *websocket.Conn
	sample bool   // records latencies
	server int    // which of the goal's servers it is connected to
	base   string // that server's URL

	mu        sync.Mutex
	t         tally
	latencies []time.Duration // since the last take, when sample
	closing   bool            // the goal ends it: a close is no cut-off
}

// dialSubscriber opens a websocket to the server, authenticates, waits for
// the acknowledgement and starts the subscription; read must then run.
func dialSubscriber(ctx context.Context, base, token, session string, sample bool, server int) (*subscriber, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 30 * time.Second}
	conn, _, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	fail := func(err error) (*subscriber, error) {
		conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": token}}); err != nil {
		return fail(fmt.Errorf("connection_init: %w", err))
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var ack struct{ Type string }
	if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		return fail(fmt.Errorf("connection_ack: got %q, %v", ack.Type, err))
	}
	_ = conn.SetReadDeadline(time.Time{})
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe",
		"payload": map[string]any{"query": fanoutQuery, "variables": map[string]any{"s": session}}}); err != nil {
		return fail(fmt.Errorf("subscribe: %w", err))
	}
	return &subscriber{conn: conn, sample: sample, server: server, base: base}, nil
}

// read receives until the stream ends; its end is a cut-off unless close
// came first.
func (s *subscriber) read() {
	var m wsMessage
	for {
		_, b, err := s.conn.ReadMessage()
		if err != nil {
			s.end("closed: " + err.Error())
			return
		}
		now := time.Now()
		m = wsMessage{}
		if err := json.Unmarshal(b, &m); err != nil {
			// An "error" message's payload is a list, not an object.
			var typ struct{ Type string }
			if json.Unmarshal(b, &typ) == nil && typ.Type == "error" {
				s.end(fmt.Sprintf("error: %.200s", b))
			} else {
				s.end(fmt.Sprintf("undecodable message %.200s: %v", b, err))
			}
			return
		}
		if m.Type == "ping" {
			_ = s.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := s.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"pong"}`)); err != nil {
				s.end("pong: " + err.Error())
				return
			}
			continue
		}
		if reason := m.endReason(); reason != "" {
			s.end(reason)
			return
		}
		if m.Type != "next" || m.Payload.Data == nil || m.Payload.Data.Events == nil {
			continue
		}
		ev := m.Payload.Data.Events
		num, sent, ok := parseFanoutText(ev.Data.Text)
		if !ok {
			continue // not the goal's
		}
		s.mu.Lock()
		s.t.observe(num, ev.Seq)
		if s.sample {
			s.latencies = append(s.latencies, now.Sub(sent))
		}
		s.mu.Unlock()
	}
}

func (s *subscriber) end(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.t.cutOff(reason)
	}
}

// snapshot is a copy of the tally.
func (s *subscriber) snapshot() tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

// takeLatencies returns the latencies recorded since the last take.
func (s *subscriber) takeLatencies() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.latencies
	s.latencies = nil
	return l
}

func (s *subscriber) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = s.conn.Close()
}

// subscribers are the goal's subscribers, each read by a goroutine of its
// own that close ends.
type subscribers struct {
	list []*subscriber
	wg   sync.WaitGroup
}

// dialSubscribers opens n subscribers spread over the servers at bases, a
// few at a time; some record latencies (subscriberPlace).
func dialSubscribers(ctx context.Context, bases []string, token, session string, n, sampleEvery int) (*subscribers, error) {
	subs := &subscribers{list: make([]*subscriber, n)}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			server, sample := subscriberPlace(i, len(bases), sampleEvery)
			s, err := dialSubscriber(ctx, bases[server], token, session, sample, server)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("subscriber %d: %w", i, err))
				return
			}
			subs.list[i] = s
		}()
	}
	wg.Wait()
	for _, s := range subs.list {
		if s != nil {
			subs.wg.Add(1)
			go func() {
				defer subs.wg.Done()
				s.read()
			}()
		}
	}
	if firstErr != nil {
		subs.close()
		return nil, firstErr
	}
	return subs, nil
}

// subscriberPlace is the server subscriber i connects to (the servers in
// turn) and whether it records latencies: every sampleEvery-th subscriber
// of each server, so that each server's subscribers are sampled alike.
func subscriberPlace(i, servers, sampleEvery int) (server int, sample bool) {
	return i % servers, (i/servers)%sampleEvery == 0
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// close ends every subscriber and waits for their readers.
func (ss *subscribers) close() {
	for _, s := range ss.list {
		if s != nil {
			s.close()
		}
	}
	ss.wg.Wait()
}

// snapshots are every subscriber's tally, in order.
func (ss *subscribers) snapshots() []tally {
	out := make([]tally, len(ss.list))
	for i, s := range ss.list {
		out[i] = s.snapshot()
	}
	return out
}

// waitCaughtUp waits until every subscriber has received text num or was
// cut off, and reports how many had not when limit passed.
func (ss *subscribers) waitCaughtUp(ctx context.Context, num int64, limit time.Duration) (behind int, err error) {
	deadline := time.Now().Add(limit)
	for {
		behind = 0
		for _, t := range ss.snapshots() {
			if !t.caughtUp(num) {
				behind++
			}
		}
		if behind == 0 || time.Now().After(deadline) {
			return behind, nil
		}
		select {
		case <-ctx.Done():
			return behind, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var errNoSubscriber = errors.New("every subscriber is cut off")
