package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/textrule"
)

// Tool is one tool of the server, declared once in Tools: what the server
// lists (all of them, or the read-only ones under --mcp-read-only), its
// annotations and its call come from here.
type Tool struct {
	Name     string
	ReadOnly bool
	add      func(*mcp.Server, binding)
}

// binding is what a tool's call reaches.
type binding struct {
	q        graph.QueryResolver
	m        graph.MutationResolver
	charger  Charger
	failures failures
}

// charge takes one call from the caller's rate limit: free for the one
// call of a request, which the middleware charged.
func (b binding) charge(ctx context.Context) error {
	if b.charger == nil {
		return nil
	}
	return b.charger.ChargeOperations(ctx, 1)
}

// Tools are the server's tools, in the order integrations.md §1 lists them.
func Tools() []Tool {
	return []Tool{
		define(spec{name: "list_sessions", title: "List sessions", readOnly: true,
			description: "The WhatsApp sessions this token reaches: id, name, status (CONNECTED when it can send) and phone. A session token reaches its one session."},
			func(ctx context.Context, b binding, _ struct{}) (sessionsOut, error) {
				ss, err := b.q.Sessions(ctx)
				out := sessionsOut{Sessions: make([]sessionSummary, len(ss))}
				for i, s := range ss {
					out.Sessions[i] = sessionSummary{ID: s.ID, Name: s.Name, Status: string(s.Status), Phone: s.Phone}
				}
				return out, err
			},
			func(o sessionsOut) string { return count(len(o.Sessions), "session") }),
		define(spec{name: "list_chats", title: "List chats", readOnly: true,
			description: "A session's chats, most recent first, from the store (whatever the session's status): name, unread count, last message. Page with cursor (the previous answer's pageInfo.endCursor).",
			args:        map[string]string{"first": "limit", "after": "cursor"}},
			func(ctx context.Context, b binding, in chatsIn) (chatsOut, error) {
				c, err := b.q.Chats(ctx, in.SessionID, in.Limit, in.Cursor, nil, in.UnreadOnly)
				return chatsOut{Chats: c}, err
			},
			func(o chatsOut) string { return page(len(o.Chats.Edges), "chat", o.Chats.PageInfo) }),
		define(spec{name: "read_messages", title: "Read messages", readOnly: true,
			description: "The stored messages of one chat, newest first (the oldest of the page last). Page back with before (the previous answer's pageInfo.endCursor).",
			args:        map[string]string{"first": "limit"}},
			func(ctx context.Context, b binding, in messagesIn) (messagesOut, error) {
				c, err := b.q.Messages(ctx, in.SessionID, in.Chat, in.Limit, in.Before)
				return messagesOut{Messages: c}, err
			},
			func(o messagesOut) string { return page(len(o.Messages.Edges), "message", o.Messages.PageInfo) }),
		define(spec{name: "search_contacts", title: "Search contacts", readOnly: true,
			description: "The session's contacts whose name, push name or phone contains query (the first 100)."},
			func(ctx context.Context, b binding, in contactsIn) (contactsOut, error) {
				c, err := b.q.Contacts(ctx, in.SessionID, nil, nil, &in.Query)
				return contactsOut{Contacts: c}, err
			},
			func(o contactsOut) string { return page(len(o.Contacts.Edges), "contact", o.Contacts.PageInfo) }),
		define(spec{name: "check_numbers", title: "Check numbers", readOnly: true,
			description: "Whether each number (1 to 50, international format) is on WhatsApp, asked of WhatsApp; the session must be CONNECTED."},
			func(ctx context.Context, b binding, in numbersIn) (numbersOut, error) {
				c, err := b.q.CheckNumbers(ctx, in.SessionID, in.Numbers)
				return numbersOut{CheckNumbers: c}, err
			},
			func(o numbersOut) string {
				on := 0
				for _, c := range o.CheckNumbers {
					if c.OnWhatsApp {
						on++
					}
				}
				return fmt.Sprintf("%d of %s on WhatsApp", on, count(len(o.CheckNumbers), "number"))
			}),
		define(spec{name: "list_groups", title: "List groups", readOnly: true,
			description: "The groups the session's account is a member of, with their participants, asked of WhatsApp."},
			func(ctx context.Context, b binding, in sessionIn) (groupsOut, error) {
				g, err := b.q.Groups(ctx, in.SessionID)
				return groupsOut{Groups: g}, err
			},
			func(o groupsOut) string { return count(len(o.Groups), "group") }),
		define(spec{name: "group_info", title: "Group info", readOnly: true,
			description: "One group (jid: …@g.us): subject, description, participants and settings, asked of WhatsApp."},
			func(ctx context.Context, b binding, in groupIn) (groupOut, error) {
				g, err := b.q.Group(ctx, in.SessionID, in.JID)
				return groupOut{Group: g}, err
			},
			func(o groupOut) string {
				return fmt.Sprintf("group %s %q, %s", o.Group.ID, o.Group.Name, count(len(o.Group.Participants), "participant"))
			}),
		define(spec{name: "send_text", title: "Send a text",
			description: "Sends a text message to a number or chat JID; the session must be CONNECTED. An idempotencyKey makes the send once however often it is asked for within 24 h.",
			args:        map[string]string{"number": "to"}},
			func(ctx context.Context, b binding, in sendTextIn) (sendTextOut, error) {
				r, err := b.m.SendText(ctx, in.SessionID, model.SendTextInput{Number: in.To, Text: in.Text, Quoted: in.Quoted, IdempotencyKey: in.IdempotencyKey})
				return sendTextOut{SendText: r}, err
			},
			func(o sendTextOut) string { return sent(o.SendText) }),
		define(spec{name: "send_media", title: "Send media",
			description: "Sends an image, video, document or audio (kind) to a number or chat JID, source an http(s) URL or base64 data; caption for image, video and document, fileName for those too. The session must be CONNECTED.",
			args:        map[string]string{"number": "to"}},
			sendMedia,
			func(o sendMediaOut) string { return sent(o.result()) }),
		define(spec{name: "send_reaction", title: "React to a message",
			description: "Reacts to a stored message of the session with one emoji; an empty emoji removes the reaction."},
			func(ctx context.Context, b binding, in reactionIn) (reactionOut, error) {
				r, err := b.m.SendReaction(ctx, in.SessionID, in.MessageID, in.Emoji, nil)
				return reactionOut{SendReaction: r}, err
			},
			func(o reactionOut) string { return sent(o.SendReaction) }),
		define(spec{name: "mark_read", title: "Mark read",
			description: "Sends read receipts for messages of a chat: those named, or every stored unread received message of it; the chat's unread count becomes 0."},
			func(ctx context.Context, b binding, in markReadIn) (markReadOut, error) {
				ok, err := b.m.MarkRead(ctx, in.SessionID, in.Chat, in.MessageIDs)
				return markReadOut{MarkRead: ok}, err
			},
			func(markReadOut) string { return "marked read" }),
	}
}

// spec is what a tool is besides its call.
type spec struct {
	name, title, description string
	readOnly                 bool
	// args names the tool's argument for an API field its name differs
	// from (number: to), for the errors that name the field.
	args map[string]string
}

// define makes a tool of a call of a resolver: In's fields are its
// arguments (inputSchema), Out is GraphQL's data for the field
// (outputSchema, structuredContent), and summary its short text.
func define[In, Out any](s spec, call func(context.Context, binding, In) (Out, error), summary func(Out) string) Tool {
	ann := &mcp.ToolAnnotations{Title: s.title, ReadOnlyHint: s.readOnly}
	if !s.readOnly {
		ann.DestructiveHint = new(bool) // sends add; they delete nothing
	}
	return Tool{Name: s.name, ReadOnly: s.readOnly, add: func(srv *mcp.Server, b binding) {
		mcp.AddTool(srv, &mcp.Tool{Name: s.name, Title: s.title, Description: s.description, Annotations: ann},
			func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
				var zero Out
				out, err := run(ctx, req, b, in, call)
				if err != nil {
					return nil, zero, b.failures.present(ctx, s, sessionOf(req), err)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary(out)}}}, out, nil
			})
	}}
}

// run applies what GraphQL's server applies around a resolver: the call
// is charged to the caller's rate limit, and client text with a NUL is
// refused (textrule).
func run[In, Out any](ctx context.Context, req *mcp.CallToolRequest, b binding, in In, call func(context.Context, binding, In) (Out, error)) (Out, error) {
	var zero Out
	if err := b.charge(ctx); err != nil {
		return zero, err
	}
	var args map[string]any
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return zero, fault.New(fault.Invalid, "arguments must be a JSON object")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if err := textrule.CheckValue(k, args[k]); err != nil {
			return zero, err
		}
	}
	return call(ctx, b, in)
}

// sessionOf is the sessionId argument of a call, for the log.
func sessionOf(req *mcp.CallToolRequest) string {
	var a struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &a)
	return a.SessionID
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func page(n int, what string, p *model.PageInfo) string {
	s := count(n, what)
	if p != nil && p.HasNextPage && p.EndCursor != nil {
		s += fmt.Sprintf("; more after cursor %s", *p.EndCursor)
	}
	return s
}

func sent(r *model.SendResult) string {
	if r == nil {
		return "sent"
	}
	if r.ScheduledAt != nil {
		return fmt.Sprintf("message %s scheduled for %s", r.MessageID, model.FormatTime(*r.ScheduledAt))
	}
	return "sent message " + r.MessageID
}
