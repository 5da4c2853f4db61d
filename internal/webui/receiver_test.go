package webui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// receiver is a webhook receiver answering status; it keeps what it got.
type receiver struct {
	*httptest.Server
	status atomic.Int64
	mu     sync.Mutex
	got    []delivery
}

type delivery struct {
	id, kind string
	status   int
	body     map[string]any
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.status.Store(http.StatusOK)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&body)
		status := int(r.status.Load())
		kind, _ := body["event"].(string)
		r.mu.Lock()
		r.got = append(r.got, delivery{id: req.Header.Get("webhook-id"), kind: kind, status: status, body: body})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, d := range r.got {
		out = append(out, d.kind)
	}
	return out
}

func (r *receiver) count(id string, status int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, d := range r.got {
		if d.id == id && d.status == status {
			n++
		}
	}
	return n
}

// sawText tells whether the receiver got event id carrying message msgID.
func (r *receiver) sawText(id, msgID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.got {
		data, _ := d.body["data"].(map[string]any)
		if d.id == id && data != nil && data["id"] == msgID {
			return true
		}
	}
	return false
}
