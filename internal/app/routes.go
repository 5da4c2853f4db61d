package app

import (
	"log/slog"
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/health"
	"github.com/wagraph/wagraph/internal/mcpserver"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/middleware"
	"github.com/wagraph/wagraph/internal/requestid"
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
	rest := restcompat.New(restcompat.Deps{Resolvers: resolver, Media: resolver, Redeliverer: resolver, MaxBody: cfg.MaxBody}, log)
	// The token is checked before anything reads a body, and the body is
	// bounded in size and in time once it is read: a REST route's body by
	// its own limit too (restcompat's table), below --max-body.
	refuseGQL := graph.RequestRefuser(log, requestid.From)
	mux.Handle("/graphql", authSvc.Middleware(limiter, log, refuseGQL)(middleware.BodyLimits(MaxGraphQLBody, cfg.BodyTimeout, refuseGQL, gql)))
	// AI agents (--mcp): the same resolvers, tokens and limits, the token checked before the body is read.
	mcpserver.Mount(mux, authSvc.Middleware(limiter, log, mcpserver.Refuse), mcpserver.Options{Config: cfg.MCP, Resolvers: resolver, Charger: limiter, MaxBody: cfg.MaxBody, BodyTimeout: cfg.BodyTimeout, Logger: log, RequestID: requestid.From})
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
	mux.HandleFunc("GET /healthz", health.Live)
	mux.Handle("GET /readyz", p.ready)
	// The metrics' middleware wraps the mux itself: it reads the pattern
	// the mux matched from the request it hands it.
	return requestid.Middleware(middleware.Recover(log, middleware.AccessLog(log, p.counters.Middleware(mux))))
}
