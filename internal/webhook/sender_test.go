package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/webhook"
)

const testSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// request is what a receiver got.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

// receiver is a webhook endpoint on loopback that records every request and
// counts the connections it accepts.
type receiver struct {
	srv     *httptest.Server
	conns   atomic.Int64
	mu      sync.Mutex
	got     []request
	release chan struct{} // closed at cleanup: handlers that wait return
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, release <-chan struct{})) *receiver {
	t.Helper()
	rc := &receiver{release: make(chan struct{})}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, request{method: r.Method, path: r.URL.RequestURI(), header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		answer(w, r, rc.release)
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.srv.Start()
	// Cleanups run last first: the waiting handlers are released, then the
	// server closes (it waits for them).
	t.Cleanup(rc.srv.Close)
	t.Cleanup(func() { close(rc.release) })
	return rc
}

func answerStatus(code int) func(http.ResponseWriter, *http.Request, <-chan struct{}) {
	return func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) { w.WriteHeader(code) }
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

func (rc *receiver) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(rc.srv.Listener.Addr().String())
}

// publicGuard is a guard that refuses private addresses but takes the given
// loopback test servers for public ones (netguard's test hook).
func publicGuard(rcs ...*receiver) *netguard.Guard {
	var public []netip.AddrPort
	for _, rc := range rcs {
		public = append(public, rc.addrPort())
	}
	return netguard.New(netguard.Options{Public: public})
}

// resolver maps made-up names to addresses.
type resolver map[string]netip.Addr

func (r resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	a, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: a.AsSlice()}}, nil
}

// errSays reports whether an outcome's Err fits want: empty when want is,
// else containing it.
func errSays(err, want string) bool {
	if want == "" {
		return err == ""
	}
	return strings.Contains(err, want)
}

// checkSigned asserts req is the signed delivery of body under eventID, sent
// between before and after.
func checkSigned(t *testing.T, req request, eventID string, body []byte, before, after time.Time) {
	t.Helper()
	if req.method != http.MethodPost {
		t.Errorf("method %s, want POST", req.method)
	}
	if string(req.body) != string(body) {
		t.Errorf("body %q, want %q", req.body, body)
	}
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-type"} {
		if n := len(req.header.Values(name)); n != 1 {
			t.Errorf("%s sent %d times, want once: %q", name, n, req.header.Values(name))
		}
	}
	if got := req.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
	if got := req.header.Get("webhook-id"); got != eventID {
		t.Errorf("webhook-id %q, want %q", got, eventID)
	}
	stamp := req.header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil || sec < before.Unix() || sec > after.Unix() {
		t.Errorf("webhook-timestamp %q, want unix seconds in [%d, %d]", stamp, before.Unix(), after.Unix())
	}
	if !verifySignature(testSecret, eventID, stamp, body, req.header.Get("webhook-signature")) {
		t.Errorf("webhook-signature %q does not verify", req.header.Get("webhook-signature"))
	}
}

func TestSendStatuses(t *testing.T) {
	tests := []struct {
		code       int
		wantStatus webhook.Status
		wantErr    string
	}{
		{http.StatusOK, webhook.Delivered, ""},
		{http.StatusAccepted, webhook.Delivered, ""},
		{http.StatusNoContent, webhook.Delivered, ""},
		{http.StatusGone, webhook.Gone, "410"},
		{http.StatusInternalServerError, webhook.Retry, "answered 500"},
		{http.StatusServiceUnavailable, webhook.Retry, "answered 503"},
		{http.StatusNotFound, webhook.Retry, "answered 404"},
		{http.StatusTooManyRequests, webhook.Retry, "answered 429"},
		{http.StatusBadRequest, webhook.Retry, "answered 400"},
		{http.StatusFound, webhook.Retry, "answered 302 (redirects are not followed)"},
		{http.StatusTemporaryRedirect, webhook.Retry, "answered 307 (redirects are not followed)"},
		{http.StatusPermanentRedirect, webhook.Retry, "answered 308 (redirects are not followed)"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			// The redirect target is a public receiver too: had the
			// redirect been followed, nothing would have stopped it.
			target := newReceiver(t, answerStatus(http.StatusOK))
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
				w.Header().Set("Location", target.srv.URL+"/elsewhere")
				w.WriteHeader(tt.code)
			})
			s := webhook.NewSender(publicGuard(rc, target), 5*time.Second, nil)
			t.Cleanup(s.Close)
			body := []byte(`{"id":"evt_1","event":"messages.update"}`)

			before := time.Now()
			out := s.Send(t.Context(), webhook.Target{URL: rc.srv.URL + "/hook?x=1", Secret: testSecret}, "evt_1", body)
			after := time.Now()

			if out.Status != tt.wantStatus || out.StatusCode != tt.code {
				t.Fatalf("outcome %+v, want status %s code %d", out, tt.wantStatus, tt.code)
			}
			if !errSays(out.Err, tt.wantErr) {
				t.Errorf("Err %q, want %q", out.Err, tt.wantErr)
			}
			if out.Duration <= 0 || out.Duration > after.Sub(before) {
				t.Errorf("Duration %s outside (0, %s]", out.Duration, after.Sub(before))
			}
			got := rc.requests()
			if len(got) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(got))
			}
			if got[0].path != "/hook?x=1" {
				t.Errorf("path %q, want /hook?x=1", got[0].path)
			}
			checkSigned(t, got[0], "evt_1", body, before, after)
			if n := len(target.requests()); n != 0 {
				t.Errorf("the redirect target got %d requests", n)
			}
		})
	}
}

// TestSendCustomHeaders: custom headers arrive; none replaces a header the
// delivery sets, even when the record was never checked by the registry.
func TestSendCustomHeaders(t *testing.T) {
	rc := newReceiver(t, answerStatus(http.StatusOK))
	log, logs := logtest.New(nil)
	s := webhook.NewSender(publicGuard(rc), 5*time.Second, log)
	t.Cleanup(s.Close)
	custom := map[string]string{
		"Authorization":     "Bearer hook-token",
		"X-Tenant":          "acme",
		"webhook-id":        "forged-id",
		"Webhook-Signature": "v1,forged",
		"WEBHOOK-TIMESTAMP": "1",
		"content-type":      "text/plain",
		"Content-Length":    "1",
		"Host":              "evil.example",
		"Transfer-Encoding": "chunked",
		"Bad Name":          "x",
		"X-Bad-Value":       "a\r\nX-Injected: yes",
	}
	body := []byte(`{"id":"evt_h"}`)
	before := time.Now()
	out := s.Send(t.Context(), webhook.Target{URL: rc.srv.URL, Secret: testSecret, Headers: custom}, "evt_h", body)
	after := time.Now()
	if out.Status != webhook.Delivered {
		t.Fatalf("outcome %+v, want delivered", out)
	}
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	req := got[0]
	checkSigned(t, req, "evt_h", body, before, after)
	for name, want := range map[string]string{"Authorization": "Bearer hook-token", "X-Tenant": "acme"} {
		if v := req.header.Values(name); len(v) != 1 || v[0] != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	for _, name := range []string{"X-Injected", "X-Bad-Value", "Bad Name", "Transfer-Encoding"} {
		if v := req.header.Values(name); len(v) != 0 {
			t.Errorf("%s arrived: %q", name, v)
		}
	}
	for _, name := range []string{"webhook-id", "Webhook-Signature", "WEBHOOK-TIMESTAMP", "content-type", "Content-Length", "Host", "Transfer-Encoding", "Bad Name", "X-Bad-Value"} {
		if len(logs.Lines("custom header skipped", name)) != 1 {
			t.Errorf("no warning names the skipped header %s", name)
		}
	}
	for _, secretish := range []string{"hook-token", "forged", "X-Injected", string(body)} {
		if strings.Contains(logs.String(), secretish) {
			t.Errorf("the log holds %q:\n%s", secretish, logs)
		}
	}
}

// TestSendTimeout: the timeout bounds the whole attempt, whether the answer
// never comes or its body never ends.
func TestSendTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	stall := func(code int) func(http.ResponseWriter, *http.Request, <-chan struct{}) {
		return func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
			if code != 0 {
				w.WriteHeader(code)
				_, _ = w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
			}
			// The bound lets a Sender that ignores its timeout fail the
			// test rather than hang it.
			select {
			case <-r.Context().Done():
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
	}
	tests := []struct {
		name       string
		answer     func(http.ResponseWriter, *http.Request, <-chan struct{})
		wantStatus webhook.Status
		wantCode   int
		wantErr    string
	}{
		{"no answer", stall(0), webhook.Retry, 0, "no answer within 300ms"},
		{"500, then a body that never ends", stall(500), webhook.Retry, 500, "answered 500"},
		{"200, then a body that never ends", stall(200), webhook.Delivered, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, tt.answer)
			s := webhook.NewSender(publicGuard(rc), timeout, nil)
			t.Cleanup(s.Close)
			start := time.Now()
			out := s.Send(t.Context(), webhook.Target{URL: rc.srv.URL, Secret: testSecret}, "evt_t", []byte("{}"))
			elapsed := time.Since(start)
			if out.Status != tt.wantStatus || out.StatusCode != tt.wantCode || !errSays(out.Err, tt.wantErr) {
				t.Fatalf("outcome %+v, want %s, code %d, err %q", out, tt.wantStatus, tt.wantCode, tt.wantErr)
			}
			if elapsed < timeout || elapsed > timeout+2*time.Second {
				t.Errorf("the attempt took %s, want about %s", elapsed, timeout)
			}
			if out.Duration < timeout || out.Duration > elapsed {
				t.Errorf("Duration %s, want in [%s, %s]", out.Duration, timeout, elapsed)
			}
		})
	}
}

// TestSendPrivateAddress: a receiver on a non-public address is refused when
// the socket would connect (after DNS for a name), unless private addresses
// are allowed or the test declared the server public.
func TestSendPrivateAddress(t *testing.T) {
	rc := newReceiver(t, answerStatus(http.StatusNoContent))
	port := strconv.Itoa(int(rc.addrPort().Port()))
	names := resolver{"hooks.example": netip.MustParseAddr("127.0.0.1")}
	tests := []struct {
		name       string
		opts       netguard.Options
		url        string
		wantStatus webhook.Status
		wantErr    string
	}{
		{"loopback address", netguard.Options{Resolver: names}, rc.srv.URL, webhook.Retry,
			"refused: 127.0.0.1 is a loopback address"},
		{"name resolving to loopback", netguard.Options{Resolver: names}, "http://hooks.example:" + port + "/h", webhook.Retry,
			"refused: host hooks.example resolves to 127.0.0.1, a loopback address"},
		{"numeric form of loopback", netguard.Options{Resolver: names}, "http://2130706433:" + port + "/h", webhook.Retry,
			"refused: host 2130706433 stands for 127.0.0.1, a loopback address"},
		{"loopback address, private allowed", netguard.Options{Resolver: names, AllowPrivate: true}, rc.srv.URL, webhook.Delivered, ""},
		{"name, private allowed", netguard.Options{Resolver: names, AllowPrivate: true}, "http://hooks.example:" + port + "/h", webhook.Delivered, ""},
		{"name, server declared public", netguard.Options{Resolver: names, Public: []netip.AddrPort{rc.addrPort()}}, "http://hooks.example:" + port + "/h", webhook.Delivered, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns, hits := rc.conns.Load(), len(rc.requests())
			s := webhook.NewSender(netguard.New(tt.opts), 5*time.Second, nil)
			t.Cleanup(s.Close)
			out := s.Send(t.Context(), webhook.Target{URL: tt.url, Secret: testSecret}, "evt_p", []byte("{}"))
			if out.Status != tt.wantStatus || !errSays(out.Err, tt.wantErr) {
				t.Fatalf("outcome %+v, want %s with err %q", out, tt.wantStatus, tt.wantErr)
			}
			newConns, newHits := rc.conns.Load()-conns, len(rc.requests())-hits
			if tt.wantStatus == webhook.Retry && (newConns != 0 || newHits != 0 || out.StatusCode != 0) {
				t.Errorf("refused, yet the receiver got %d connections and %d requests (code %d)", newConns, newHits, out.StatusCode)
			}
			if tt.wantStatus == webhook.Delivered && (newHits != 1 || out.StatusCode != http.StatusNoContent) {
				t.Errorf("delivered, yet the receiver got %d requests (code %d)", newHits, out.StatusCode)
			}
		})
	}
}

// TestSendErrorsHoldNoSecret: whatever goes wrong, Outcome.Err and the log
// hold neither the secret, nor the body, nor the URL's query.
func TestSendErrorsHoldNoSecret(t *testing.T) {
	const mark = "SeCrEtMaRk"
	secret := "whsec_" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	body := []byte(`{"text":"body-` + mark + `"}`)
	failing := newReceiver(t, answerStatus(http.StatusInternalServerError))
	stalled := newReceiver(t, func(_ http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	closed := func() string { // a port nobody listens on any more
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	allow := netguard.Options{AllowPrivate: true}
	tests := []struct {
		name    string
		opts    netguard.Options
		ctx     context.Context
		target  webhook.Target
		wantErr string
	}{
		{"refused address", netguard.Options{}, t.Context(),
			webhook.Target{URL: failing.srv.URL + "/h?token=" + mark, Secret: secret}, "refused"},
		{"connection refused", allow, t.Context(),
			webhook.Target{URL: "http://" + closed + "/h?token=" + mark, Secret: secret}, "connection refused"},
		{"timeout", allow, t.Context(),
			webhook.Target{URL: stalled.srv.URL + "/h?token=" + mark, Secret: secret}, "no answer within"},
		{"status", allow, t.Context(),
			webhook.Target{URL: failing.srv.URL + "/h?token=" + mark, Secret: secret}, "answered 500"},
		{"canceled", allow, canceled,
			webhook.Target{URL: failing.srv.URL + "/h?token=" + mark, Secret: secret}, "canceled"},
		{"malformed URL", allow, t.Context(),
			webhook.Target{URL: "http://[::1%zz]/h?token=" + mark, Secret: secret}, "not an absolute http(s) URL"},
		{"not http", allow, t.Context(),
			webhook.Target{URL: "file:///etc/" + mark, Secret: secret}, "not an absolute http(s) URL"},
		{"malformed secret", allow, t.Context(),
			webhook.Target{URL: failing.srv.URL, Secret: "whsec_*" + mark}, "signing failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs := logtest.New(nil)
			s := webhook.NewSender(netguard.New(tt.opts), 200*time.Millisecond, log)
			t.Cleanup(s.Close)
			out := s.Send(tt.ctx, tt.target, "evt_s", body)
			if out.Status != webhook.Retry || !strings.Contains(out.Err, tt.wantErr) {
				t.Fatalf("outcome %+v, want retry with an error saying %q", out, tt.wantErr)
			}
			for _, leak := range []string{mark, strings.TrimPrefix(tt.target.Secret, "whsec_"), "token="} {
				if strings.Contains(out.Err, leak) {
					t.Errorf("Err %q holds %q", out.Err, leak)
				}
				if strings.Contains(logs.String(), leak) {
					t.Errorf("the log holds %q:\n%s", leak, logs)
				}
			}
		})
	}
}

// TestSendLargeAnswer: a receiver answering at length does not hold the
// attempt up: a few KiB are read and the rest dropped.
func TestSendLargeAnswer(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 1024 { // 64 MiB, if anyone read it
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	s := webhook.NewSender(publicGuard(rc), 10*time.Second, nil)
	t.Cleanup(s.Close)
	out := s.Send(t.Context(), webhook.Target{URL: rc.srv.URL, Secret: testSecret}, "evt_l", []byte("{}"))
	if out.Status != webhook.Delivered || out.StatusCode != http.StatusOK {
		t.Fatalf("outcome %+v, want delivered", out)
	}
	if out.Duration > 5*time.Second {
		t.Errorf("the attempt took %s: the answer's body was read", out.Duration)
	}
}
