package mcpserver

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// The resources: a session's chats and one chat with its newest messages,
// the reads of list_chats and read_messages (the same resolvers) as JSON,
// for the clients that attach resources rather than call tools.
const (
	chatsTemplate = "wagraph://sessions/{id}/chats"
	chatTemplate  = "wagraph://sessions/{id}/chats/{jid}"
)

// chatOut is a chat and its newest messages: GraphQL's data for chat and
// messages asked for together.
type chatOut struct {
	Chat     *model.Chat              `json:"chat"`
	Messages *model.MessageConnection `json:"messages"`
}

func addResources(srv *mcp.Server, b binding) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: chatsTemplate, Name: "chats", Title: "A session's chats", MIMEType: "application/json",
		Description: "The session's 50 most recent chats, as list_chats answers (wagraph://sessions/<sessionId>/chats).",
	}, b.resource(func(ctx context.Context, id, jid string) (any, error) {
		c, err := b.q.Chats(ctx, id, nil, nil, nil, nil)
		return chatsOut{Chats: c}, err
	}))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: chatTemplate, Name: "chat", Title: "A chat and its newest messages", MIMEType: "application/json",
		Description: "One chat of the session and its 50 newest messages, newest first (wagraph://sessions/<sessionId>/chats/<jid or number>).",
	}, b.resource(func(ctx context.Context, id, jid string) (any, error) {
		c, err := b.q.Chat(ctx, id, jid)
		if err != nil || c == nil {
			return nil, err
		}
		m, err := b.q.Messages(ctx, id, jid, nil, nil)
		return chatOut{Chat: c, Messages: m}, err
	}))
}

// resource reads the session id and the chat (for a chat's URI) from the
// URI, charges the read as a tool call is charged, and answers read's
// answer as JSON; nil is a resource not found, as is a session out of reach.
func (b binding) resource(read func(ctx context.Context, id, jid string) (any, error)) mcp.ResourceHandler {
	s := spec{name: "resources/read"}
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		id, jid, ok := parseURI(uri)
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var v any
		err := b.charge(ctx)
		if err == nil {
			v, err = read(ctx, id, jid)
		}
		switch {
		case fault.CodeOf(err) == fault.NotFound, err == nil && v == nil:
			return nil, mcp.ResourceNotFoundError(uri)
		case err != nil:
			return nil, b.failures.present(ctx, s, id, err)
		}
		body, err := json.Marshal(v)
		if err != nil {
			return nil, b.failures.present(ctx, s, id, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(body)}}}, nil
	}
}

// parseURI reads wagraph://sessions/<id>/chats[/<jid>], its parts
// percent-decoded.
func parseURI(uri string) (id, jid string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "wagraph" || u.Host != "sessions" {
		return "", "", false
	}
	parts := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	if len(parts) < 2 || len(parts) > 3 || parts[1] != "chats" {
		return "", "", false
	}
	for i, p := range parts {
		if parts[i], err = url.PathUnescape(p); err != nil || parts[i] == "" {
			return "", "", false
		}
	}
	if len(parts) == 3 {
		jid = parts[2]
	}
	return parts[0], jid, true
}
