package graph

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ServerOptions are the limits of the GraphQL endpoint.
type ServerOptions struct {
	ComplexityLimit int
	Introspection   bool
	RequestID       RequestIDFunc
}

// gqlgen's own error codes, folded into the contract's vocabulary: a query
// that does not parse or validate is bad user input.
var ownCodes = map[string]string{
	"GRAPHQL_PARSE_FAILED":      "BAD_USER_INPUT",
	"GRAPHQL_VALIDATION_FAILED": "BAD_USER_INPUT",
	"COMPLEXITY_LIMIT_EXCEEDED": "BAD_USER_INPUT",
}

// NewServer returns the GraphQL HTTP handler over the resolvers of r.
func NewServer(r *Resolver, log *slog.Logger, opts ServerOptions) http.Handler {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: r}))
	srv.AddTransport(websocketTransport(r.Auth))
	srv.AddTransport(transport.SSE{KeepAlivePingInterval: 15 * time.Second})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(15000)
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetDisableSuggestion(true)
	}
	if opts.ComplexityLimit > 0 {
		srv.Use(extension.FixedComplexityLimit(opts.ComplexityLimit))
	}
	srv.SetErrorPresenter(ErrorPresenter(log, opts.RequestID))
	srv.SetRecoverFunc(Recover(log))
	srv.AroundFields(markInternal)
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp != nil {
			foldOwnCodes(resp.Errors)
		}
		return resp
	})
	return srv
}

// foldOwnCodes gives every error an extensions.code of the contract.
func foldOwnCodes(errs gqlerror.List) {
	for _, e := range errs {
		if e.Extensions == nil {
			e.Extensions = map[string]any{}
		}
		code, _ := e.Extensions["code"].(string)
		switch {
		case code == "":
			e.Extensions["code"] = "BAD_USER_INPUT"
		case ownCodes[code] != "":
			e.Extensions["code"] = ownCodes[code]
		}
	}
}
