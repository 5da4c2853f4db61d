package cluster

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is the listener of a process, keeping a copy of every call it
// takes, as somebody on the network between the processes would.
type recorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	h     http.Handler
	calls []recorded
}

type recorded struct {
	header http.Header
	body   []byte
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.calls = append(rec.calls, recorded{header: r.Header.Clone(), body: body})
		h := rec.h
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) serve(h http.Handler) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.h = h
}

func (rec *recorder) first(t *testing.T) recorded {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) == 0 {
		t.Fatal("no call recorded")
	}
	return rec.calls[0]
}

// replay sends a recorded call again, as it was.
func (rec *recorder) replay(t *testing.T, c recorded) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, rec.srv.URL+CallPath, bytes.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(msg)
}

// TestCallReplayRefused: a call recorded between two processes and sent
// again, as it was and within the signature window, is refused each time
// (finding 11: a replayed send was sent three more times), while the
// caller's own next calls, each with a nonce of its own, go through.
func TestCallReplayRefused(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 1)
	ctx := context.Background()
	w := newWorld()
	rec := newRecorder(t)
	a := join(t, d.SQL, w.local("a"), callTTL, "")
	b := join(t, d.SQL, w.local("b"), callTTL, rec.srv.Listener.Addr().String())
	ra, _ := newTestRouter(t, a, d)
	rb, _ := newTestRouter(t, b, d)
	rec.serve(rb.Handler(1 << 20))
	if took, err := b.Claim(ctx, ids[0]); err != nil || !took {
		t.Fatalf("claim: %v, %v", took, err)
	}
	if _, err := ra.Status(ctx, ids[0]); err != nil {
		t.Fatalf("the forwarded call: %v", err)
	}
	captured := rec.first(t)
	for i := range 3 {
		status, msg := rec.replay(t, captured)
		if status != http.StatusUnauthorized || !strings.Contains(msg, "replayed") {
			t.Errorf("replay %d: %d %q; want 401 naming a replay", i+1, status, strings.TrimSpace(msg))
		}
	}
	for i := range 2 {
		if _, err := ra.Status(ctx, ids[0]); err != nil {
			t.Errorf("the caller's call %d after the replays: %v", i+2, err)
		}
	}
}
