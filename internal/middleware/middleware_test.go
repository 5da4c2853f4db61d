package middleware

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/requestid"
)

// refuser answers a refusal with its fault's status and message, and
// keeps the fault.
type refuser struct{ got *fault.Error }

func (f *refuser) refuse(w http.ResponseWriter, _ *http.Request, err error) {
	f.got = fault.From(err)
	w.WriteHeader(fault.HTTPStatus(f.got.Code))
	_, _ = io.WriteString(w, f.got.Message)
}

// TestRecover: a panicking handler is answered 500 with the request id and
// nothing of the panic; the panic and its stack go to the log. An
// http.ErrAbortHandler panics on.
func TestRecover(t *testing.T) {
	log, buf := logtest.New(slog.LevelInfo)
	h := requestid.Middleware(Recover(log, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("the secret is hunter2")
	})))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set(requestid.Header, "req-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "req-1") || strings.Contains(rec.Body.String(), "hunter2") {
		t.Errorf("answer %d %q, want 500 naming the request id only", rec.Code, rec.Body)
	}
	if len(buf.Lines("handler panicked", "hunter2", "req-1", "stack")) != 1 {
		t.Errorf("log:\n%s", buf)
	}

	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler to panic on", v)
		}
	}()
	Recover(log, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

// TestAccessLog: at the debug level each request is a record with its
// method, path, status and request id; above it nothing is written.
func TestAccessLog(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		lines int
	}{{slog.LevelDebug, 1}, {slog.LevelInfo, 0}} {
		t.Run(tc.level.String(), func(t *testing.T) {
			log, buf := logtest.New(tc.level)
			h := requestid.Middleware(AccessLog(log, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusCreated)
			})))
			req := httptest.NewRequest(http.MethodPost, "/api/v1/session", nil)
			req.Header.Set(requestid.Header, "req-2")
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got := buf.Lines(`"msg":"http"`, `"method":"POST"`, `"path":"/api/v1/session"`, `"status":201`, `"request_id":"req-2"`); len(got) != tc.lines {
				t.Errorf("%d records, want %d:\n%s", len(got), tc.lines, buf)
			}
		})
	}
}

// TestAdminOnly: only an admin's user token passes; a session token of an
// admin's session and a user who is not an admin are refused FORBIDDEN.
func TestAdminOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *auth.Principal
		pass bool
	}{
		{"admin", &auth.Principal{UserID: "u1", Admin: true}, true},
		{"user", &auth.Principal{UserID: "u2"}, false},
		{"an admin's session token", &auth.Principal{UserID: "u1", Admin: true, SessionID: "s1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &refuser{}
			passed := false
			h := AdminOnly("read /metrics", f.refuse, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			h.ServeHTTP(httptest.NewRecorder(), req.WithContext(auth.WithPrincipal(req.Context(), tc.p)))
			if passed != tc.pass || (!tc.pass && (f.got == nil || f.got.Code != fault.Forbidden)) {
				t.Errorf("passed %v, refused %v; want passed %v", passed, f.got, tc.pass)
			}
		})
	}
}

// TestBodyLimits: a body announced larger than the limit is refused before
// it is read; one larger than announced stops at the limit; one that does
// not arrive within the timeout is answered 408, whatever the handler
// made of its half.
func TestBodyLimits(t *testing.T) {
	const max, timeout = 16, 200 * time.Millisecond
	f := &refuser{}
	read := make(chan error, 1)
	srv := httptest.NewServer(BodyLimits(max, timeout, f.refuse, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		read <- err
		_, _ = io.WriteString(w, "handled")
	})))
	defer srv.Close()

	t.Run("announced too large", func(t *testing.T) {
		resp, err := http.Post(srv.URL, "text/plain", strings.NewReader(strings.Repeat("x", max+1)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || f.got == nil || f.got.Code != fault.TooLarge {
			t.Errorf("status %d, refused %v; want 413 TOO_LARGE", resp.StatusCode, f.got)
		}
		select {
		case err := <-read:
			t.Errorf("the handler read the body (%v)", err)
		default:
		}
	})
	t.Run("larger than announced", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, io.MultiReader(strings.NewReader(strings.Repeat("x", max*4))))
		req.ContentLength = -1 // chunked: no size announced
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var tooLarge *http.MaxBytesError
		if err := <-read; !errors.As(err, &tooLarge) {
			t.Errorf("the handler read %v, want *http.MaxBytesError", err)
		}
	})
	t.Run("too slow", func(t *testing.T) {
		f.got = nil
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Eight bytes announced, four sent, the rest never.
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\nabcd")
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || f.got == nil || f.got.Code != fault.RequestTimeout || strings.Contains(string(body), "handled") {
			t.Errorf("answer %d %q, refused %v; want 408 REQUEST_TIMEOUT in place of the handler's", resp.StatusCode, body, f.got)
		}
		if err := <-read; err == nil {
			t.Error("the handler read the whole body of a request that never finished")
		}
	})
}

// TestLimitBody: a route's own limit inside the server's: a body announced
// larger is refused before it is read, with the limit in the message and
// the connection closed; one sent without a length stops at the limit;
// one within it is read whole.
func TestLimitBody(t *testing.T) {
	const max = 1 << 10
	for _, tt := range []struct {
		name      string
		size      int
		announced bool
		status    int
		readErr   bool // the handler's read fails with *http.MaxBytesError
	}{
		{"announced, at the limit", max, true, http.StatusOK, false},
		{"announced, one byte over", max + 1, true, http.StatusRequestEntityTooLarge, false},
		{"announced, 60 MiB", 60 << 20, true, http.StatusRequestEntityTooLarge, false},
		{"chunked, at the limit", max, false, http.StatusOK, false},
		{"chunked, one byte over", max + 1, false, http.StatusOK, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &refuser{}
			read := make(chan error, 1)
			srv := httptest.NewServer(LimitBody(max, f.refuse, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, err := io.ReadAll(r.Body)
				read <- err
			})))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, io.LimitReader(zeros{}, int64(tt.size)))
			req.ContentLength = -1
			if tt.announced {
				req.ContentLength = int64(tt.size)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == http.StatusRequestEntityTooLarge {
				if f.got == nil || f.got.Code != fault.TooLarge || f.got.Message != "request body is larger than the limit of 1 KiB" || !resp.Close {
					t.Errorf("refused %v, connection closed %v; want TOO_LARGE naming 1 KiB, closed", f.got, resp.Close)
				}
				select {
				case err := <-read:
					t.Errorf("the handler read the body (%v)", err)
				default:
				}
				return
			}
			var tooLarge *http.MaxBytesError
			if err := <-read; errors.As(err, &tooLarge) != tt.readErr || !tt.readErr && err != nil {
				t.Errorf("the handler read %v; want a *http.MaxBytesError: %v", err, tt.readErr)
			}
		})
	}
}

// zeros reads zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
