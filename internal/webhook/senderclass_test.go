package webhook_test

import (
	"bufio"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/webhook"
)

// rawLeaks are what a raw Go transport error puts in the delivery log: the
// resolver's address and port, the request line Go repeats, the dial and
// lookup prefixes, TLS and x509 internals, and the text a receiver chose.
var rawLeaks = []string{":53", "127.0.0.53", "lookup ", "dial tcp", "Post \"", "net/http", "tls:", "x509", "EOF", "read tcp", "connect:", "RECEIVER-CHOSEN"}

// rawServer accepts connections on loopback and hands each to serve.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// readRequest reads a request's head so that an answer is not reset by
// unread data.
func readRequest(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		l, err := r.ReadString('\n')
		if err != nil || l == "\r\n" {
			return
		}
	}
}

// TestSendErrorClasses: each way a receiver can fail is recorded as one
// short, fixed message of its class: never the resolver's address, the Go
// error's text or what the receiver wrote. On main before this change the
// raw error was recorded, e.g. "dial tcp: netguard: resolve hooks.invalid:
// lookup hooks.invalid on 10.255.255.53:53: no such host", "EOF",
// "tls: failed to verify certificate: x509: certificate signed by unknown
// authority", "net/http: HTTP/1.x transport connection broken: malformed
// HTTP response \"RECEIVER-CHOSEN...\"".
func TestSendErrorClasses(t *testing.T) {
	closes := rawServer(t, func(c net.Conn) { readRequest(c) })
	resets := rawServer(t, func(c net.Conn) {
		readRequest(c)
		_ = c.(*net.TCPConn).SetLinger(0)
	})
	garbage := rawServer(t, func(c net.Conn) {
		readRequest(c)
		_, _ = c.Write([]byte("RECEIVER-CHOSEN text on 127.0.0.53:53, no HTTP here\r\n\r\n"))
	})
	badStatus := rawServer(t, func(c net.Conn) {
		readRequest(c)
		_, _ = c.Write([]byte("HTTP/1.1 2x0 RECEIVER-CHOSEN\r\nContent-Length: 0\r\n\r\n"))
	})
	stalled := newReceiver(t, func(_ http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	plain := newReceiver(t, answerStatus(http.StatusOK))
	redirect := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		http.Redirect(w, r, "http://127.0.0.53:53/RECEIVER-CHOSEN", http.StatusFound)
	})
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	tlsSrv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshake is expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	closedPort := func() string {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()

	allow := netguard.Options{AllowPrivate: true}
	// Only the stalled receiver is meant to time out; the others get a
	// deadline a loaded machine cannot reach, so that a slow TLS handshake
	// is not recorded as a timeout.
	const short, long = 300 * time.Millisecond, 30 * time.Second
	tests := []struct {
		name    string
		opts    netguard.Options
		url     string
		want    string
		timeout time.Duration
	}{
		{"host name does not resolve (system resolver)", netguard.Options{}, "http://hooks.invalid/h",
			"the receiver's host name does not resolve", long},
		{"connection refused", allow, "http://" + closedPort + "/h",
			"connection refused", long},
		{"closed without an answer", allow, "http://" + closes + "/h",
			"the receiver closed the connection without an answer", long},
		{"connection reset", allow, "http://" + resets + "/h",
			"the receiver closed the connection without an answer", long},
		{"answer is not HTTP", allow, "http://" + garbage + "/h",
			"the receiver's answer is not valid HTTP", long},
		{"status line is not HTTP", allow, "http://" + badStatus + "/h",
			"the receiver's answer is not valid HTTP", long},
		{"TLS certificate of an unknown authority", allow, tlsSrv.URL + "/h",
			"the receiver's TLS certificate is not valid", long},
		{"https URL, plain HTTP receiver", allow, "https://" + plain.srv.Listener.Addr().String() + "/h",
			"TLS handshake failed", long},
		{"no answer before the timeout", allow, stalled.srv.URL + "/h",
			"no answer within 300ms", short},
		{"private address refused by the guard", netguard.Options{}, plain.srv.URL + "/h",
			"refused: 127.0.0.1 is a loopback address", long},
		{"redirect not followed", allow, redirect.srv.URL + "/h",
			"the receiver answered 302 (redirects are not followed)", long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs := logtest.New(slog.LevelDebug)
			s := webhook.NewSender(netguard.New(tt.opts), tt.timeout, log)
			t.Cleanup(s.Close)
			out := s.Send(t.Context(), webhook.Target{URL: tt.url, Secret: testSecret}, "evt_c", []byte("{}"))
			if out.Status != webhook.Retry {
				t.Fatalf("outcome %+v, want retry", out)
			}
			if out.Err != tt.want {
				t.Errorf("recorded error %q, want %q", out.Err, tt.want)
			}
			for _, leak := range rawLeaks {
				if strings.Contains(out.Err, leak) {
					t.Errorf("recorded error %q holds %q", out.Err, leak)
				}
			}
			if strings.Contains(logs.String(), strings.TrimPrefix(testSecret, "whsec_")) {
				t.Errorf("the log holds the secret:\n%s", logs)
			}
		})
	}
}

// TestDispatchRecordsErrorClass: the delivery log (the attempt rows the
// owner reads) holds the class of a failure, and the server log its whole
// cause, with the session and webhook it concerns, never the secret.
func TestDispatchRecordsErrorClass(t *testing.T) {
	db, _ := openOutbox(t)
	addHook(t, db, "w1", "http://hooks.invalid/hook?token=tok", events.Call)
	logger, logs := logtest.New(slog.LevelDebug)
	obs := newObserver()
	sender := webhook.NewSender(netguard.New(netguard.Options{}), 5*time.Second, logger)
	t.Cleanup(sender.Close)
	d := runDispatcher(t, webhook.DispatcherOptions{DB: db, Sender: sender, Observer: obs, Logger: logger,
		Schedule: []time.Duration{0, 20 * time.Millisecond}})
	env := appendEvents(t, newLog(t, db, nil), events.New{Kind: events.Call})[0]
	d.Wake()
	if got := obs.nextN(t, 2); got[0] != webhook.OutcomeRetry || got[1] != webhook.OutcomeFailed {
		t.Fatalf("outcomes %v, want [retry failed]", got)
	}
	dlv := deliveryOf(t, db, env.ID, "w1")
	const want = "the receiver's host name does not resolve"
	if dlv.LastError != want {
		t.Errorf("delivery's last error %q, want %q", dlv.LastError, want)
	}
	for _, a := range attemptsOf(t, db, dlv.ID) {
		if a.err != want {
			t.Errorf("attempt %+v, want error %q", a, want)
		}
	}
	var causes int
	for _, r := range logs.Records() {
		if r["msg"] != "webhook attempt" {
			continue
		}
		cause, _ := r["cause"].(string)
		if r["session_id"] != "s1" || r["webhook_id"] != "w1" || !strings.Contains(cause, "no such host") || !strings.Contains(cause, "hooks.invalid") {
			t.Errorf("attempt log record %v: want session_id s1, webhook_id w1 and the whole cause", r)
		}
		causes++
	}
	if causes != 2 {
		t.Errorf("%d attempt log records, want 2:\n%s", causes, logs)
	}
	for _, leak := range []string{strings.TrimPrefix(testSecret, "whsec_"), "token=tok"} {
		if strings.Contains(logs.String(), leak) {
			t.Errorf("the log holds %q:\n%s", leak, logs)
		}
	}
}
