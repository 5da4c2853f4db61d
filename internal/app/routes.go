package app

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
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
	mux.Handle("/graphql", authSvc.Middleware(limiter, a.log, refuseGQL)(middleware.BodyLimits(MaxGraphQLBody, a.cfg.BodyTimeout, refuseGQL, gql)))
	// The contract's description is public: a client reads it before it
	// has a token.
	mux.Handle(restcompat.Prefix+"/openapi.json", restcompat.OpenAPI())
	mux.Handle(restcompat.Prefix+"/", http.StripPrefix(restcompat.Prefix,
		authSvc.Middleware(limiter, a.log, rest.Refuse)(middleware.BodyLimits(a.cfg.MaxBody, a.cfg.BodyTimeout, rest.Refuse, metrics.Nested(restcompat.Prefix, rest)))))
	// The metrics tell how busy every session is: an admin token reads
	// them (Prometheus sends it as bearer credentials). Refusals are the
	// REST envelope.
	mux.Handle("GET /metrics", authSvc.Middleware(limiter, a.log, rest.Refuse)(middleware.AdminOnly("read /metrics", rest.Refuse, a.metrics.Handler())))
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
	return requestid.Middleware(middleware.Recover(a.log, middleware.AccessLog(a.log, a.metrics.Middleware(mux))))
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
