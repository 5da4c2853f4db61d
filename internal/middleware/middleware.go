// Package middleware is the HTTP middleware the server wraps its routes
// in: panic recovery, the access log, request body limits (size and time)
// and the admin gate. Each is a plain func(http.Handler) shape with its
// dependencies as arguments, so the composition root reads as a line.
package middleware

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/requestid"
)

// Refuse answers a request refused with err, in the words of its transport
// (auth.Refuse: GraphQL's error list, REST's envelope).
type Refuse = auth.Refuse

// AdminOnly lets in only an admin's user token (auth.Middleware has put
// the caller in the context); refuse answers the others.
func AdminOnly(what string, refuse Refuse, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := auth.Require(r.Context())
		if err == nil {
			err = p.RequireAdmin(what)
		}
		if err != nil {
			refuse(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// BodyLimits caps request bodies at max bytes and gives the whole body
// timeout (--body-timeout) to arrive. A body announced larger than max is refused
// before it is read; one that turns out larger stops at max (readers see
// *http.MaxBytesError); one trickling in is cut when its time is up and
// cannot hold its connection for ever, and is answered 408 whatever the
// handler made of its half (gqlgen answers a body it could not read with
// 200 and an error).
func BodyLimits(max int64, timeout time.Duration, refuse Refuse, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			refuseLarge(w, r, max, refuse)
			return
		}
		if r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
				body := &deadlineBody{ReadCloser: r.Body, rc: rc, header: w.Header()}
				r.Body = body
				w = &lateBodyWriter{ResponseWriter: w, body: body, answer: func(w http.ResponseWriter) {
					refuse(w, r, fault.New(fault.RequestTimeout, "the request body did not arrive within %s (--body-timeout)", timeout))
				}}
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// LimitBody caps request bodies at max bytes, as BodyLimits does without
// its timeout: inside BodyLimits, a route's own limit (restcompat's table)
// below the server's. A body announced larger is refused before it is
// read; one that turns out larger stops at max.
func LimitBody(max int64, refuse Refuse, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			refuseLarge(w, r, max, refuse)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// refuseLarge answers a body announced larger than max, which is not read:
// the connection closes, since what is left of it is no next request.
func refuseLarge(w http.ResponseWriter, r *http.Request, max int64, refuse Refuse) {
	w.Header().Set("Connection", "close")
	refuse(w, r, fault.New(fault.TooLarge, "request body is larger than the limit of %s", config.FormatSize(max)))
}

// deadlineBody lifts the read deadline once the body has been read: after
// that the server reads the connection only to notice a client that left,
// which a long response (a subscription over SSE) must not mistake for a
// timeout. A body that failed to arrive closes its connection: what is
// left of it must not be read as the next request.
type deadlineBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	header   http.Header
	done     bool
	timedOut atomic.Bool // its deadline passed before its end: read by lateBodyWriter
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done || err == nil:
	case err == io.EOF:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	default:
		b.done = true
		b.header.Set("Connection", "close")
		if errors.Is(err, os.ErrDeadlineExceeded) {
			b.timedOut.Store(true)
		}
	}
	return n, err
}

// lateBodyWriter answers 408 in place of the handler's answer once the
// body timed out: whatever the handler writes then is about a body it
// never had. An answer already begun is left alone.
type lateBodyWriter struct {
	http.ResponseWriter
	body     *deadlineBody
	answer   func(http.ResponseWriter)
	answered bool // the 408 is written: the handler's writes are dropped
	begun    bool // the handler's answer is under way: it stands
}

// late reports whether the handler's write is to be dropped, answering
// 408 the first time.
func (w *lateBodyWriter) late() bool {
	switch {
	case w.answered:
		return true
	case w.begun || !w.body.timedOut.Load():
		w.begun = true
		return false
	}
	w.answered = true
	w.answer(w.ResponseWriter)
	return true
}

func (w *lateBodyWriter) WriteHeader(code int) {
	if !w.late() {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *lateBodyWriter) Write(p []byte) (int, error) {
	if w.late() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *lateBodyWriter) Flush() {
	if !w.late() {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *lateBodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusRecorder keeps the status for the access log. Flush and Unwrap
// keep what the wrapped writer can do: SSE flushes every event, websockets
// hijack the connection.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) Flush() { _ = http.NewResponseController(s.ResponseWriter).Flush() }

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// AccessLog writes a record of each request (method, path, status, time
// taken, request id) at the debug level, to log.
func AccessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// At the default level the record is not written: the request is
		// served as it is, without a recorder or a clock read.
		if !log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		log.LogAttrs(r.Context(), slog.LevelDebug, "http",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("took", time.Since(start)),
			slog.String("request_id", requestid.From(r.Context())))
	})
}

// Recover answers a panicking handler with a 500 that carries only the
// request id, logs the panic with its stack to log, and keeps the process
// alive. http.ErrAbortHandler panics on, as net/http means it to.
func Recover(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				id := requestid.From(r.Context())
				log.ErrorContext(r.Context(), "handler panicked", "panic", v, "request_id", id, "stack", string(debug.Stack()))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"status":"failed","message":"internal error (request id ` + id + `)"}` + "\n"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
