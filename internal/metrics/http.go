package metrics

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Unmatched is the route of a request no pattern matched (404, 405).
const Unmatched = "unmatched"

// Middleware counts the requests next answers, by route and status, and
// observes how long they took, by route. next must be the ServeMux itself
// (or a handler passing the same *http.Request to it): the route is the
// pattern the mux matched, read from the request it set it on, never the
// raw path, so the series stay as few as the routes. A nested mux reports
// its own finer pattern through Nested.
func (c *Counters) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		slot := &routeSlot{}
		r = r.WithContext(context.WithValue(r.Context(), routeKey{}, slot))
		rec := &recorder{ResponseWriter: w}
		finished := false
		// Deferred so that a panicking handler is counted too (as the 500
		// the server's recovery answers) without recovering it here.
		defer func() {
			status := rec.status
			switch {
			case !finished:
				status = http.StatusInternalServerError
			case status == 0:
				status = http.StatusOK
			}
			route := slot.route
			if route == "" {
				route = patternOf(r)
			}
			c.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
			c.httpDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(rec, r)
		finished = true
	})
}

// Nested wraps a handler that routes with a ServeMux of its own, mounted
// under prefix on the outer mux (which sees only "/api/v1/"): once it has
// served, the pattern its mux matched, with prefix put back in front of
// the path ("POST /api/v1/session/{sessionId}"), is the request's route.
// next must hand its mux the same *http.Request.
func Nested(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		slot, _ := r.Context().Value(routeKey{}).(*routeSlot)
		if slot == nil {
			return
		}
		p := patternOf(r)
		if p == Unmatched {
			return
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return
		}
		slot.route = p[:i] + prefix + p[i:]
	})
}

// patternOf is the pattern a mux matched for r. A CONNECT request's
// redirect carries its own path in place of a pattern (net/http's
// findHandler), so it is not trusted.
func patternOf(r *http.Request) string {
	if r.Pattern == "" || r.Method == http.MethodConnect {
		return Unmatched
	}
	return r.Pattern
}

type routeKey struct{}

// routeSlot carries a nested mux's route out to Middleware.
type routeSlot struct{ route string }

// recorder keeps the status. Flush, Hijack and Unwrap keep what the
// wrapped writer can do: SSE flushes every event, websockets hijack the
// connection (counted as 101).
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil && r.status == 0 {
		r.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
