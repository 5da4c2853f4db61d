package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/middleware"
	"github.com/wagraph/wagraph/internal/requestid"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/webui"
	"github.com/wagraph/wagraph/restcompat"
)

// MaxGraphQLBody caps a GraphQL request body: a document is far smaller,
// and media travel as URLs or through REST (--max-body).
const MaxGraphQLBody = 1 << 20

// api is what the HTTP surface serves.
type api struct {
	resolver *graph.Resolver
	auth     *auth.Service
	limiter  *auth.Limiter
	counters *metrics.Counters // count every request
	metrics  *metrics.Metrics  // GET /metrics
	// clusterCalls are the calls of the other processes of a cluster;
	// nil on SQLite.
	clusterCalls http.Handler
	ready        http.Handler // GET /readyz
}

// routes is the whole HTTP surface of the API's listener.
func routes(cfg config.Config, log *slog.Logger, p api) http.Handler {
	resolver, authSvc, limiter := p.resolver, p.auth, p.limiter
	mux := http.NewServeMux()
	limits := graph.DefaultDocumentLimits
	limits.Depth = cfg.GraphQLDepth
	gql := graph.NewServer(resolver, log, graph.ServerOptions{
		ComplexityLimit: cfg.GraphQLComplexity,
		MaxAnswer:       cfg.GraphQLMaxAnswer,
		Document:        limits,
		Introspection:   true,
		RequestID:       requestid.From,
		Charger:         limiter,
		Connections:     limiter,
	})
	rest := restcompat.New(restcompat.Deps{Resolvers: resolver, Media: resolver, Redeliverer: resolver}, log)
	// The token is checked before anything reads a body, and the body is
	// bounded in size and in time once it is read.
	refuseGQL := graph.RequestRefuser(log, requestid.From)
	mux.Handle("/graphql", authSvc.Middleware(limiter, log, refuseGQL)(middleware.BodyLimits(MaxGraphQLBody, cfg.BodyTimeout, refuseGQL, gql)))
	// The contract's description is public: a client reads it before it
	// has a token.
	mux.Handle(restcompat.Prefix+"/openapi.json", restcompat.OpenAPI())
	mux.Handle(restcompat.Prefix+"/", http.StripPrefix(restcompat.Prefix,
		authSvc.Middleware(limiter, log, rest.Refuse)(middleware.BodyLimits(cfg.MaxBody, cfg.BodyTimeout, rest.Refuse, metrics.Nested(restcompat.Prefix, rest)))))
	// The metrics tell how busy every session is: an admin token reads
	// them (Prometheus sends it as bearer credentials). Refusals are the
	// REST envelope.
	mux.Handle("GET /metrics", authSvc.Middleware(limiter, log, rest.Refuse)(middleware.AdminOnly("read /metrics", rest.Refuse, p.metrics.Handler())))
	if p.clusterCalls != nil && cfg.ClusterAddr == "" {
		// Calls forwarded by the other processes of the cluster, here
		// unless --cluster-addr has a listener for them (cluster.go).
		mux.Handle("POST "+cluster.CallPath, p.clusterCalls)
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
	mux.Handle("GET /readyz", p.ready)
	// The metrics' middleware wraps the mux itself: it reads the pattern
	// the mux matched from the request it hands it.
	return requestid.Middleware(middleware.Recover(log, middleware.AccessLog(log, p.counters.Middleware(mux))))
}

// writeProbe tells whether the database takes writes (storage.Probe:
// a real write at most once a second, shared by the callers meanwhile, so
// unauthenticated probes cannot turn into a flood of writes).
type writeProbe interface {
	Check(ctx context.Context) error
}

// readiness is /readyz: whether the database takes writes, and whether
// the linked sessions have been started (the background work tells).
type readiness struct {
	probe    writeProbe
	log      *slog.Logger
	started  atomic.Bool   // the restore ran to its end
	restored chan struct{} // closed when the restore has ended
}

func newReadiness(probe writeProbe, log *slog.Logger) *readiness {
	return &readiness{probe: probe, log: log, restored: make(chan struct{})}
}

// ServeHTTP answers 200 when the database takes a write and the linked
// sessions have been started; else 503 naming what is missing: the
// database's state (storage.ProbeKind: full, unreachable, read-only,
// timeout, failed) or the sessions still restoring.
func (rd *readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := rd.probe.Check(r.Context()); err != nil {
		kind := storage.KindOf(err)
		rd.log.ErrorContext(r.Context(), "readyz: the database takes no writes", "database", string(kind), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable","database":"` + string(kind) + `"}` + "\n"))
		return
	}
	if !rd.started.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","sessions":"restoring"}` + "\n"))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}
