package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/requestid"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/webui"
	"github.com/wagraph/wagraph/restcompat"
)

// MaxGraphQLBody caps a GraphQL request body: a document is far smaller,
// and media travel as URLs or through REST (--max-body).
const MaxGraphQLBody = 1 << 20

func (a *App) routes(resolver *graph.Resolver, authSvc *auth.Service, limiter *auth.Limiter) http.Handler {
	mux := http.NewServeMux()
	limits := graph.DefaultDocumentLimits
	limits.Depth = a.cfg.GraphQLDepth
	gql := graph.NewServer(resolver, a.log, graph.ServerOptions{
		ComplexityLimit: a.cfg.GraphQLComplexity,
		MaxAnswer:       a.cfg.GraphQLMaxAnswer,
		Document:        limits,
		Introspection:   true,
		RequestID:       requestid.From,
		Charger:         limiter,
		Connections:     limiter,
	})
	rest := restcompat.New(resolver, a.log)
	// The token is checked before anything reads a body, and the body is
	// bounded in size and in time once it is read.
	refuseGQL := graph.RequestRefuser(a.log, requestid.From)
	mux.Handle("/graphql", authSvc.Middleware(limiter, a.log, refuseGQL)(a.bodyLimits(MaxGraphQLBody, refuseGQL, gql)))
	// The contract's description is public: a client reads it before it
	// has a token.
	mux.Handle(restcompat.Prefix+"/openapi.json", restcompat.OpenAPI())
	mux.Handle(restcompat.Prefix+"/", http.StripPrefix(restcompat.Prefix,
		authSvc.Middleware(limiter, a.log, rest.Refuse)(a.bodyLimits(a.cfg.MaxBody, rest.Refuse, metrics.Nested(restcompat.Prefix, rest)))))
	// The metrics tell how busy every session is: an admin token reads
	// them (Prometheus sends it as bearer credentials). Refusals are the
	// REST envelope.
	mux.Handle("GET /metrics", authSvc.Middleware(limiter, a.log, rest.Refuse)(adminOnly("read /metrics", rest.Refuse, a.metrics.Handler())))
	if a.router != nil && a.cfg.ClusterAddr == "" {
		// Calls forwarded by the other processes of the cluster, here
		// unless --cluster-addr has a listener for them (cluster.go).
		mux.Handle("POST "+cluster.CallPath, a.clusterHandler())
	}
	// GraphiQL, every file of it embedded: it works without internet.
	graphiql := webui.GraphiQL()
	mux.Handle("GET /{$}", graphiql)
	mux.Handle("GET /graphiql/", graphiql)
	// The dashboard, embedded too; it calls /graphql with the token the
	// person pastes, like any other client.
	mux.Handle("GET /ui/", webui.Dashboard())
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	// The REST API's reference, rendered in the browser from the served
	// openapi.json by an embedded Swagger UI.
	apidocs := webui.APIDocs()
	mux.Handle("GET /api/docs", apidocs)
	mux.Handle("GET /apidocs/", apidocs)
	mux.Handle("GET /api/docs/", http.RedirectHandler("/api/docs", http.StatusMovedPermanently))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	// The metrics' middleware wraps the mux itself: it reads the pattern
	// the mux matched from the request it hands it.
	return requestid.Middleware(a.recoverPanics(a.accessLog(a.metrics.Middleware(mux))))
}

// writeProbe tells whether the database takes writes (storage.Probe:
// a real write at most once a second, shared by the callers meanwhile, so
// unauthenticated probes cannot turn into a flood of writes).
type writeProbe interface {
	Check(ctx context.Context) error
}

// readyz answers 200 when the database takes a write and the linked
// sessions have been started; else 503 naming what is missing: the
// database's state (storage.ProbeKind: full, unreachable, read-only,
// timeout, failed) or the sessions still restoring.
func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := a.probe.Check(r.Context()); err != nil {
		kind := storage.KindOf(err)
		a.log.ErrorContext(r.Context(), "readyz: the database takes no writes", "database", string(kind), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable","database":"` + string(kind) + `"}` + "\n"))
		return
	}
	if !a.sessionsStarted.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","sessions":"restoring"}` + "\n"))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

// adminOnly lets in only an admin's user token (auth.Middleware has put
// the caller in the context).
func adminOnly(what string, refuse auth.Refuse, next http.Handler) http.Handler {
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

// bodyLimits caps request bodies at max bytes and gives the whole body
// --body-timeout to arrive. A body announced larger than max is refused
// before it is read; one that turns out larger stops at max (readers see
// *http.MaxBytesError); one trickling in is cut when its time is up and
// cannot hold its connection for ever, and is answered 408 whatever the
// handler made of its half (gqlgen answers a body it could not read with
// 200 and an error).
func (a *App) bodyLimits(max int64, refuse auth.Refuse, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			refuse(w, r, fault.New(fault.TooLarge, "request body is larger than the limit of %s", config.FormatSize(max)))
			return
		}
		if r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(a.cfg.BodyTimeout)); err == nil {
				body := &deadlineBody{ReadCloser: r.Body, rc: rc, header: w.Header()}
				r.Body = body
				w = &lateBodyWriter{ResponseWriter: w, body: body, answer: func(w http.ResponseWriter) {
					refuse(w, r, fault.New(fault.RequestTimeout, "the request body did not arrive within %s (--body-timeout)", a.cfg.BodyTimeout))
				}}
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
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

func (a *App) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// At the default level the record is not written: the request is
		// served as it is, without a recorder or a clock read.
		if !a.log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "http",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("took", time.Since(start)),
			slog.String("request_id", requestid.From(r.Context())))
	})
}

// recoverPanics answers a panicking handler with a 500 that carries only the
// request id, and keeps the process alive.
func (a *App) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				id := requestid.From(r.Context())
				a.log.ErrorContext(r.Context(), "handler panicked", "panic", v, "request_id", id, "stack", string(debug.Stack()))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"status":"failed","message":"internal error (request id ` + id + `)"}` + "\n"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
