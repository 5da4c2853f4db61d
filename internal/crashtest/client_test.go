//go:build unix

package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testclient"
)

// A GraphQL client of the server as any other client would be, and the
// webhook receiver.

// server is a running wagraph serve as its clients reach it.
type server struct {
	*child
	base  string // http://host:port
	token string
	http  *http.Client
}

// graphql runs one operation and decodes its data into out; a transport
// failure or any GraphQL error is an error.
func (s *server) graphql(query string, vars map[string]any, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return testclient.GraphQL(ctx, s.http, s.base, "Bearer "+s.token, query, vars, out)
}

// must runs an operation that has to succeed.
func (s *server) must(t *testing.T, query string, vars map[string]any, out any) {
	t.Helper()
	if err := s.graphql(query, vars, out); err != nil {
		t.Fatalf("%s: %v", strings.Join(strings.Fields(query), " "), err)
	}
}

// ready waits until /readyz answers 200: storage open, linked sessions
// started.
func (s *server) ready(t *testing.T) {
	t.Helper()
	s.waitFor(t, s.name+" ready", time.Minute, func() (bool, error) {
		res, err := s.http.Get(s.base + "/readyz")
		if err != nil {
			return false, err
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		return res.StatusCode == http.StatusOK, fmt.Errorf("readyz %d %s", res.StatusCode, b)
	})
}

// status waits until the session is in status (and ok holds for it) and
// returns its fields.
func (s *server) status(t *testing.T, sessionID, status string, limit time.Duration) map[string]any {
	t.Helper()
	var last map[string]any
	s.waitFor(t, "session "+sessionID+" "+status, limit, func() (bool, error) {
		var out struct{ Session map[string]any }
		if err := s.graphql(`query($id: ID!) { session(id: $id) { id status jid qrCode } }`, map[string]any{"id": sessionID}, &out); err != nil {
			return false, err
		}
		last = out.Session
		return last != nil && last["status"] == status && (status != "PAIRING" || last["qrCode"] != nil), fmt.Errorf("session %v", last)
	})
	return last
}

// envelope is an event as events.md writes it: in a webhook body, a
// subscription payload and the stored log.
type envelope struct {
	ID        string          `json:"id"`
	Seq       int64           `json:"seq"`
	Event     string          `json:"event"`
	SessionID string          `json:"sessionId"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// messageData is what the test reads of the data of a message kind.
type messageData struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// delivery is one request the receiver got.
type delivery struct {
	webhookID string
	env       envelope
	msg       messageData
}

// receiver is the webhook endpoint: it records every request and answers
// 200.
type receiver struct {
	prefix string // the texts of the burst

	mu    sync.Mutex
	all   []delivery
	texts map[string]bool // distinct texts of the burst received
	bad   []string        // requests that were not an envelope
}

func newReceiver(prefix string) *receiver {
	return &receiver{prefix: prefix, texts: map[string]bool{}}
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	d := delivery{webhookID: r.Header.Get("webhook-id")}
	err = json.Unmarshal(body, &d.env)
	if err == nil && d.env.Event == "inbound-message.upsert" {
		err = json.Unmarshal(d.env.Data, &d.msg)
	}
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if err != nil || r.Method != http.MethodPost {
		rv.bad = append(rv.bad, fmt.Sprintf("%s %s: %v: %.200s", r.Method, r.URL.Path, err, body))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rv.all = append(rv.all, d)
	if strings.HasPrefix(d.msg.Text, rv.prefix) {
		rv.texts[d.msg.Text] = true
	}
	w.WriteHeader(http.StatusNoContent)
}

// seen is how many distinct texts of the burst arrived.
func (rv *receiver) seen() int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return len(rv.texts)
}

func (rv *receiver) deliveries() ([]delivery, []string) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]delivery(nil), rv.all...), append([]string(nil), rv.bad...)
}
