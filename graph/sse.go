package graph

import (
	"net/http"
	"strings"
	"time"
)

// SSEWriteTimeout bounds each write of a server-sent events stream. A
// subscriber that stops reading fills its socket; without a deadline the
// write would wait for ever and hold the stream (and its request) open.
// Past it the write fails, net/http cancels the request's context, and the
// subscription ends, as a websocket's does (its writes have the same bound).
const SSEWriteTimeout = 10 * time.Second

// sseDeadlines gives each write of an SSE response a deadline.
func sseDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w = &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		}
		next.ServeHTTP(w, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(SSEWriteTimeout))
	return d.ResponseWriter.Write(p)
}

// Flush is where the buffered events reach the socket.
func (d *deadlineWriter) Flush() {
	_ = d.rc.SetWriteDeadline(time.Now().Add(SSEWriteTimeout))
	_ = d.rc.Flush()
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
