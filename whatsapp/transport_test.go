package whatsapp

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// handshakes records the websocket handshakes that go through it: the
// extensions each offered and the ones its answer accepted.
type handshakes struct {
	base http.RoundTripper

	mu      sync.Mutex
	offers  []string
	answers []string
}

func (h *handshakes) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := h.base.RoundTrip(req)
	if req.Header.Get("Upgrade") != "websocket" || err != nil {
		return res, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.offers = append(h.offers, req.Header.Get("Sec-WebSocket-Extensions"))
	h.answers = append(h.answers, res.Header.Get("Sec-WebSocket-Extensions"))
	return res, nil
}

func (h *handshakes) seen() (offers, answers []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.offers...), append([]string(nil), h.answers...)
}

// TestClientsDoNotCompress: a session's clients, the pairing one and the
// logged-in one after it, open their websockets without offering
// permessage-deflate, so that the network accepts none.
func TestClientsDoNotCompress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wire := &handshakes{base: e.net.Transport()}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses, Transport: wire})
	t.Cleanup(m.Close)
	e.pairQR(m, "s1", "491701234567")
	// A restart's reconnect: the linked client dials the chat socket anew.
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.settle(e.waitStatus(m, "s1", StatusConnected))

	offers, answers := wire.seen()
	if len(offers) < 2 {
		t.Fatalf("%d websocket handshakes, want the pairing and the logged-in ones at least", len(offers))
	}
	for i := range offers {
		if offers[i] != "" || answers[i] != "" {
			t.Errorf("handshake %d: offered %q, accepted %q; want no extension", i+1, offers[i], answers[i])
		}
	}
}

// TestWithoutDeflate: the network accepts the compression whatsmeow's
// socket offers unless withoutDeflate takes the offer away.
func TestWithoutDeflate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name       string
		wrap       func(http.RoundTripper) http.RoundTripper
		wantAnswer bool
	}{
		{"as whatsmeow dials", func(rt http.RoundTripper) http.RoundTripper { return rt }, true},
		{"without deflate", func(rt http.RoundTripper) http.RoundTripper { return withoutDeflate{rt} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := &handshakes{base: e.net.Transport()}
			ws, _, err := websocket.Dial(context.Background(), "wss://web.whatsapp.com/ws/chat", &websocket.DialOptions{
				HTTPClient: &http.Client{Transport: tt.wrap(wire)}, CompressionMode: websocket.CompressionContextTakeover,
			})
			if err != nil {
				t.Fatal(err)
			}
			ws.CloseNow()
			offers, answers := wire.seen()
			if len(offers) != 1 {
				t.Fatalf("%d handshakes, want 1", len(offers))
			}
			if got := offers[0] != "" && answers[0] != ""; got != tt.wantAnswer {
				t.Errorf("offered %q, accepted %q; want compression %v", offers[0], answers[0], tt.wantAnswer)
			}
		})
	}
}
