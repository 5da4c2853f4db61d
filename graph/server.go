package graph

import (
	"context"
	"encoding/json"
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

	"github.com/wagraph/wagraph/internal/fault"
)

// ServerOptions are the limits of the GraphQL endpoint.
type ServerOptions struct {
	// ComplexityLimit caps an operation's cost (cost.go); zero: no cap.
	ComplexityLimit int
	Document        DocumentLimits // zero: DefaultDocumentLimits
	Introspection   bool
	RequestID       RequestIDFunc
	// Charger takes each operation from the caller's rate limit; nil
	// leaves operations unlimited.
	Charger OperationCharger
	// Connections charges the connection_init of a socket whose upgrade
	// came without a token; nil leaves them unlimited.
	Connections ConnectionCharger
	// MaxAnswer caps the bytes of a query's or a mutation's answer; zero:
	// DefaultMaxAnswer.
	MaxAnswer int64
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
	es := NewExecutableSchema(Config{Resolvers: r})
	srv := handler.New(es)
	srv.AddTransport(websocketTransport(r.Auth, opts.Connections))
	srv.AddTransport(transport.SSE{KeepAlivePingInterval: 15 * time.Second})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	limits := opts.Document
	if limits == (DocumentLimits{}) {
		limits = DefaultDocumentLimits
	}
	cache := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(cache)
	srv.SetParserTokenLimit(limits.Tokens)
	// First of the extensions: nothing else looks at a document before it
	// has passed the limits.
	srv.Use(newDocumentGuard(es.Schema(), cache, limits, opts.Introspection, opts.Charger))
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetDisableSuggestion(true)
	}
	if opts.ComplexityLimit > 0 {
		srv.Use(&costLimit{limit: opts.ComplexityLimit})
	}
	maxAnswer := opts.MaxAnswer
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswer
	}
	present := ErrorPresenter(log, opts.RequestID)
	srv.SetErrorPresenter(present)
	srv.SetRecoverFunc(Recover())
	srv.AroundFields(markInternal)
	srv.AroundFields(refuseNUL)
	srv.AroundOperations(recheckSockets(r.Auth, present))
	srv.AroundOperations(laneOperations)
	srv.AroundOperations(boundAnswers(maxAnswer))
	srv.AroundRootFields(dropOverBudget)
	srv.AroundFields(countAnswer)
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		if resp != nil {
			foldOwnCodes(resp.Errors)
		}
		return resp
	})
	return sseDeadlines(boundRequestJSON(RequestRefuser(log, opts.RequestID), srv))
}

// refusalStatus is the HTTP status of a request refused before GraphQL saw
// it; a request GraphQL executes answers 200 with its errors in the body.
var refusalStatus = map[fault.Code]int{
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.RateLimited:     http.StatusTooManyRequests,
	fault.Invalid:         http.StatusBadRequest, // as gqlgen answers a body it cannot decode
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.RequestTimeout:  http.StatusRequestTimeout,
}

// RequestRefuser returns how a request that was not let in (no valid
// token, the rate limit, storage down) is answered: a GraphQL response
// holding one error of its code, an unclassified cause logged and shown
// only as the request id.
func RequestRefuser(log *slog.Logger, requestID RequestIDFunc) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		f := fault.From(err)
		if f == nil {
			id := requestID(r.Context())
			log.ErrorContext(r.Context(), "graphql request refused", "err", err, "request_id", id)
			f = fault.New(fault.Internal, "internal error (request id %s)", id)
		}
		status, ok := refusalStatus[f.Code]
		if !ok {
			status = http.StatusInternalServerError
		}
		body, _ := json.Marshal(map[string]any{
			"errors": []map[string]any{{"message": f.Message, "extensions": map[string]any{"code": ExtensionCode(f.Code)}}},
			"data":   nil,
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(append(body, '\n'))
	}
}

// maxOwnMessage bounds a message of gqlgen's own.
const maxOwnMessage = 256

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
		default:
			continue
		}
		// gqlgen's own messages quote the client's values whole.
		e.Message = fault.Clip(e.Message, maxOwnMessage)
	}
}
