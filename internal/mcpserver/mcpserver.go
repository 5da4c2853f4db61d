// Package mcpserver is the MCP server for AI agents (integrations.md §1):
// the Model Context Protocol's Streamable HTTP transport at /mcp, built on
// github.com/modelcontextprotocol/go-sdk, stateless (every POST stands
// alone, so any process of a cluster answers it).
//
// It is a transport like REST (restcompat): each tool decodes its
// arguments and calls the resolver of its GraphQL field, so the checks,
// the reach of a token, the errors and the events are that field's, and
// its structuredContent is the field's answer as GraphQL's data holds it.
// Authentication and the per-request rate limit are internal/auth's
// middleware, before the body is read; a tool call is charged once more
// only when a request carries more than one (the limiter's prepaid
// operation). The tools are declared once, in tools.go: the list served,
// the read-only subset (--mcp-read-only) and the annotations come from it.
package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/middleware"
)

// Path is where the server is served.
const Path = "/mcp"

// Charger takes operations from the caller's rate limit (auth.Limiter).
type Charger interface {
	ChargeOperations(ctx context.Context, n int) error
}

// Options are what the server is built from.
type Options struct {
	// Resolvers are the GraphQL resolvers the tools call.
	Resolvers graph.ResolverRoot
	// Charger charges each tool call to the caller's rate limit.
	Charger Charger
	// Config is --mcp and --mcp-read-only: served or not, and all the
	// tools or the read-only ones.
	Config config.MCP
	// MaxBody and BodyTimeout bound a request's body, as a REST send's
	// (--max-body, --body-timeout): a send_media may carry its media.
	MaxBody     int64
	BodyTimeout time.Duration
	Logger      *slog.Logger
	// RequestID names a request in an internal error's message.
	RequestID func(context.Context) string
}

// Mount serves the server at Path on mux behind guard (the auth
// middleware, which lets in only a valid token within its rate limit),
// the body bounded in size and time; with --mcp=false nothing is served
// there (404).
func Mount(mux *http.ServeMux, guard func(http.Handler) http.Handler, opts Options) {
	if !opts.Config.Enabled {
		return
	}
	mux.Handle(Path, guard(middleware.BodyLimits(opts.MaxBody, opts.BodyTimeout, Refuse, New(opts).Handler())))
}

// Server is the MCP server: its tools and resources, and the handler
// serving them.
type Server struct {
	handler http.Handler
}

// New builds the server with its tools (the read-only ones only under
// --mcp-read-only) and resources.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RequestID == nil {
		opts.RequestID = func(context.Context) string { return "" }
	}
	version := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "wagraph", Title: "wagraph WhatsApp gateway", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: opts.Logger})
	b := binding{
		q: opts.Resolvers.Query(), m: opts.Resolvers.Mutation(), charger: opts.Charger,
		failures: failures{log: opts.Logger, requestID: opts.RequestID},
	}
	for _, t := range Tools() {
		if opts.Config.ReadOnly && !t.ReadOnly {
			continue
		}
		t.add(srv, b)
	}
	addResources(srv, b)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       opts.Logger,
		// The SDK refuses a loopback connection naming another host,
		// against DNS rebinding of a local server that trusts its
		// callers. Every call here carries a token, which a rebound page
		// does not have, and a reverse proxy on the same machine
		// connects over loopback with the public host name.
		DisableLocalhostProtection: true,
		// The body limit is the route's (BodyLimits, before the read);
		// the SDK would otherwise cut at its own 4 MiB below it.
		MaxRequestBodyBytes: -1,
	})
	return &Server{handler: h}
}

// Handler serves the Streamable HTTP transport. It expects the caller
// authenticated (auth's middleware) and the body bounded (Mount does both).
func (s *Server) Handler() http.Handler { return s.handler }

const instructions = `wagraph is a WhatsApp gateway. Its sessions are linked WhatsApp accounts: ` +
	`list_sessions gives the ones this token reaches, and every other tool takes a sessionId. ` +
	`Numbers are in international format (country code first, digits only) or full JIDs.`

// Refuse answers a request the auth middleware does not let in: 401 with
// WWW-Authenticate: Bearer without a valid token (the MCP authorization
// rule), 429 with the middleware's Retry-After over the rate limit. The
// body is a JSON-RPC error with the API's message; nothing of the
// request's own was read.
func Refuse(w http.ResponseWriter, r *http.Request, err error) {
	f := fault.From(err)
	if f == nil {
		f = fault.New(fault.Internal, "internal error")
	}
	status := fault.HTTPStatus(f.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32001, "message": f.Message, "data": map[string]string{"code": graph.ExtensionCode(f.Code)}},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
