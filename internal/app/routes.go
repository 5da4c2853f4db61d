package app

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/requestid"
	"github.com/wagraph/wagraph/restcompat"
)

// GraphQL limits. The complexity cap is generous for hand-written queries and
// stops pathological nesting.
const complexityLimit = 1000

func (a *App) routes(resolver *graph.Resolver, authenticate func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	gql := graph.NewServer(resolver, a.log, graph.ServerOptions{
		ComplexityLimit: complexityLimit,
		Introspection:   true,
		RequestID:       requestid.From,
	})
	mux.Handle("/graphql", authenticate(a.limitBody(gql)))
	// The contract's description is public: a client reads it before it
	// has a token.
	mux.Handle(restcompat.Prefix+"/openapi.json", restcompat.OpenAPI())
	mux.Handle(restcompat.Prefix+"/", http.StripPrefix(restcompat.Prefix, authenticate(a.limitBody(restcompat.New(resolver, a.log)))))
	mux.Handle("GET /{$}", playground.Handler("wagraph", "/graphql"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if err := a.sqlDB.PingContext(r.Context()); err != nil {
			a.log.ErrorContext(r.Context(), "readyz: database unreachable", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable","database":"unreachable"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
	})
	return requestid.Middleware(a.recoverPanics(a.accessLog(mux)))
}

// limitBody caps request bodies at --max-body; readers see
// *http.MaxBytesError past it.
func (a *App) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.MaxBody)
		next.ServeHTTP(w, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (a *App) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
