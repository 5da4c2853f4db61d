package apptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Received is one request a Receiver got.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time // when its body had been read: latency measurements end here
}

// Receiver is a webhook endpoint on loopback (the server needs
// --allow-private-urls to reach it). It answers with the status codes it
// was given, in turn, the last one repeating; while held, answers wait.
type Receiver struct {
	*httptest.Server
	arrived chan Received

	mu    sync.Mutex
	codes []int
	got   []Received
	gate  chan struct{} // nil: not held
}

// NewReceiver starts a receiver answering codes in turn (none: 200) until
// the test ends.
func NewReceiver(t testing.TB, codes ...int) *Receiver {
	t.Helper()
	if len(codes) == 0 {
		codes = []int{http.StatusOK}
	}
	rc := &Receiver{codes: codes, arrived: make(chan Received, 1000)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	// Cleanups run last first: held answers go, then the server closes
	// (it waits for them).
	t.Cleanup(rc.Close)
	t.Cleanup(rc.release)
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Received{Header: r.Header.Clone(), Body: body, At: time.Now()}
	rc.mu.Lock()
	rc.got = append(rc.got, req)
	code := rc.codes[0]
	if len(rc.codes) > 1 {
		rc.codes = rc.codes[1:]
	}
	gate := rc.gate
	rc.mu.Unlock()
	rc.arrived <- req
	if gate != nil {
		<-gate
	}
	w.WriteHeader(code)
}

// Hold makes answers wait until the returned release is called (the test's
// end releases them too): what the server stored before the answer can be
// read without racing the answer's recording.
func (rc *Receiver) Hold() (release func()) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gate = make(chan struct{})
	return rc.release
}

func (rc *Receiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gate != nil {
		close(rc.gate)
		rc.gate = nil
	}
}

// Requests returns what the receiver got so far, in order.
func (rc *Receiver) Requests() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// Next waits for the next request to arrive (before it is answered); it
// fails the test after a minute.
func (rc *Receiver) Next(t testing.TB) Received {
	t.Helper()
	select {
	case r := <-rc.arrived:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the webhook receiver got no request within a minute")
		return Received{}
	}
}

// WaitDeliveries waits until no delivery of the webhook is PENDING, reading
// the delivery log over REST as a client would (no signal leaves the
// server when an attempt is recorded). It reads no clock of the server, so
// a pinned clock stays where the deliveries left it. It fails the test
// after a minute.
func (s *Server) WaitDeliveries(t testing.TB, sessionID, webhookID string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res := s.REST(t, "GET", "/session/"+sessionID+"/webhook/"+webhookID+"/deliveries?first=100", AdminToken, "")
		var page struct {
			Data []struct{ Status string }
		}
		res.JSON(t, &page)
		if res.Status != http.StatusOK {
			t.Fatalf("read the delivery log: %d %s", res.Status, res.Body)
		}
		pending := false
		for _, d := range page.Data {
			pending = pending || d.Status == "PENDING"
		}
		if !pending {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries still pending after a minute: %s", res.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
