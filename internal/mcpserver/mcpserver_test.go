package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/mcpserver"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestMain removes the linked fixture (apptest.StartLinked) after the tests.
func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

// readOnly is integrations.md §1's table: each tool and whether it is
// read-only. The server's tool list is held to it.
var readOnly = map[string]bool{
	"list_sessions": true, "list_chats": true, "read_messages": true, "search_contacts": true,
	"check_numbers": true, "list_groups": true, "group_info": true,
	"send_text": false, "send_media": false, "send_reaction": false, "mark_read": false,
}

// connect opens an MCP session with the SDK's own client over Streamable
// HTTP, the token in the Authorization header of every request.
func connect(t *testing.T, s *apptest.Server, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: withToken{token: token, next: s.Client().Transport}, Timeout: 30 * time.Second}
	client := mcp.NewClient(&mcp.Implementation{Name: "wagraph-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: s.URL + mcpserver.Path, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", mcpserver.Path, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type withToken struct {
	token string
	next  http.RoundTripper
}

func (w withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+w.token)
	return w.next.RoundTrip(r)
}

// call calls a tool and decodes its structuredContent into out; it fails
// the test on a tool error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res := callRaw(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: structuredContent %s: %v", tool, b, err)
	}
	if text(res) == "" {
		t.Errorf("%s: no text content beside the structured answer", tool)
	}
	return res
}

func callRaw(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestAgent: an agent lists the tools (schemas, read-only hints as the
// contract's table has them), sends a text that reaches the simulated
// phone, sees it in list_chats and read_messages, and reads a bad
// number's refusal naming the argument.
func TestAgent(t *testing.T) {
	s, sess := apptest.StartLinked(t)
	cs := connect(t, s, apptest.AdminToken)
	if v := cs.InitializeResult().ProtocolVersion; v < "2025-06-18" {
		t.Errorf("protocol version %s, want 2025-06-18 or newer", v)
	}

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		want, known := readOnly[tool.Name]
		switch {
		case !known:
			t.Errorf("tool %s is not in the contract's table", tool.Name)
		case tool.Annotations == nil || tool.Annotations.ReadOnlyHint != want:
			t.Errorf("tool %s: annotations %+v, want readOnlyHint %v", tool.Name, tool.Annotations, want)
		}
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) || !strings.Contains(string(out), `"type":"object"`) || tool.Description == "" {
			t.Errorf("tool %s: inputSchema %s, outputSchema %s, description %q; want object schemas and a description", tool.Name, in, out, tool.Description)
		}
	}
	if len(names) != len(readOnly) {
		t.Errorf("tools %v, want the %d of the contract", names, len(readOnly))
	}
	var send struct{ Tool *mcp.Tool }
	for _, tool := range tools.Tools {
		if tool.Name == "send_text" {
			send.Tool = tool
		}
	}
	if in, _ := json.Marshal(send.Tool.InputSchema); !strings.Contains(string(in), `"required":["sessionId","to","text"]`) {
		t.Errorf("send_text's inputSchema %s; want sessionId, to and text required", in)
	}

	var sessions struct {
		Sessions []struct{ ID, Name, Status, Phone string }
	}
	call(t, cs, "list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != sess.ID || sessions.Sessions[0].Status != "CONNECTED" || sessions.Sessions[0].Phone != apptest.LinkedPhone {
		t.Errorf("list_sessions: %+v, want the linked session, CONNECTED, phone %s", sessions, apptest.LinkedPhone)
	}

	const to, hello = "4915550360002", "Hallo from an agent"
	var sent struct{ SendText struct{ MessageID string } }
	call(t, cs, "send_text", map[string]any{"sessionId": sess.ID, "to": to, "text": hello}, &sent)
	id := sent.SendText.MessageID
	n := s.Network(t)
	testclient.Until(t, 15*time.Second, "the phone receives the agent's text", func() bool {
		return slices.ContainsFunc(n.Inbox(to), func(m wafake.Received) bool {
			return m.ID == id && m.Message.GetConversation()+m.Message.GetExtendedTextMessage().GetText() == hello
		})
	})

	chat := to + "@s.whatsapp.net"
	var chats struct{ Chats struct{ Edges []chatEdge } }
	testclient.Until(t, 10*time.Second, "list_chats shows the chat with the text last", func() bool {
		call(t, cs, "list_chats", map[string]any{"sessionId": sess.ID, "limit": 10}, &chats)
		return slices.ContainsFunc(chats.Chats.Edges, func(e chatEdge) bool { return e.Node.Jid == chat && e.Node.LastMessage.ID == id })
	})
	var messages struct {
		Messages struct {
			Edges []struct {
				Node struct {
					ID, Text string
					FromMe   bool
				}
			}
		}
	}
	call(t, cs, "read_messages", map[string]any{"sessionId": sess.ID, "chat": to}, &messages)
	if e := messages.Messages.Edges; len(e) == 0 || e[0].Node.ID != id || e[0].Node.Text != hello || !e[0].Node.FromMe {
		t.Errorf("read_messages: %+v, want the agent's text first", messages)
	}

	// A contact's text leaves its chat unread (unreadOnly lists it, not
	// the agent's), until mark_read sends the receipts.
	const ana = "4915550360004"
	if _, err := n.SendText(ana, apptest.LinkedPhone, "Ana here"); err != nil {
		t.Fatal(err)
	}
	unread := func() []string {
		var c struct{ Chats struct{ Edges []chatEdge } }
		call(t, cs, "list_chats", map[string]any{"sessionId": sess.ID, "unreadOnly": true}, &c)
		var out []string
		for _, e := range c.Chats.Edges {
			out = append(out, e.Node.Jid)
		}
		return out
	}
	testclient.Until(t, 10*time.Second, "the contact's chat listed unread alone", func() bool {
		return slices.Equal(unread(), []string{ana + "@s.whatsapp.net"})
	})
	var read struct{ MarkRead bool }
	call(t, cs, "mark_read", map[string]any{"sessionId": sess.ID, "chat": ana}, &read)
	if !read.MarkRead {
		t.Errorf("mark_read answered %+v", read)
	}
	testclient.Until(t, 10*time.Second, "no chat unread after mark_read", func() bool { return len(unread()) == 0 })

	// The same read as a resource.
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "wagraph://sessions/" + sess.ID + "/chats/" + to})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"id":"`+id+`"`) {
		t.Errorf("resource of the chat: %+v, %v; want the chat with the agent's text", rr, err)
	}

	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"bad number", map[string]any{"sessionId": sess.ID, "to": "12", "text": "x"}, "BAD_USER_INPUT (argument to): number"},
		{"NUL in the text", map[string]any{"sessionId": sess.ID, "to": to, "text": "a\x00b"}, "BAD_USER_INPUT (argument text): text must not contain NUL"},
		{"no such session", map[string]any{"sessionId": "nope", "to": to, "text": "x"}, "NOT_FOUND"},
	} {
		res := callRaw(t, cs, "send_text", tt.args)
		if !res.IsError || !strings.HasPrefix(text(res), tt.want) {
			t.Errorf("%s: isError %v, %q; want a tool error starting %q", tt.name, res.IsError, text(res), tt.want)
		}
	}
	if got := len(n.Inbox(to)); got != 1 {
		t.Errorf("the phone has %d messages; the refused sends reached it", got)
	}
}

type chatEdge struct {
	Node struct {
		Jid         string
		LastMessage struct{ ID string }
	}
}

// TestSessionTokenReach: a session token's agent sees its one session
// and can neither read nor act on another: the other answers as one that
// does not exist.
func TestSessionTokenReach(t *testing.T) {
	s, sess := apptest.StartLinked(t)
	other := s.CreateSession(t, "other")
	var tok struct{ CreateSessionToken string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sess.ID}, &tok)
	cs := connect(t, s, tok.CreateSessionToken)

	var sessions struct{ Sessions []struct{ ID string } }
	call(t, cs, "list_sessions", nil, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != sess.ID {
		t.Errorf("list_sessions: %+v, want only %s", sessions, sess.ID)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_chats", map[string]any{"sessionId": other}},
		{"read_messages", map[string]any{"sessionId": other, "chat": "4915550360003"}},
		{"send_text", map[string]any{"sessionId": other, "to": "4915550360003", "text": "not mine"}},
		{"mark_read", map[string]any{"sessionId": other, "chat": "4915550360003"}},
	} {
		res := callRaw(t, cs, c.tool, c.args)
		if !res.IsError || !strings.HasPrefix(text(res), "NOT_FOUND") {
			t.Errorf("%s on another session: isError %v %q; want NOT_FOUND", c.tool, res.IsError, text(res))
		}
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "wagraph://sessions/" + other + "/chats"}); err == nil {
		t.Error("the resource of another session's chats was read")
	}
	// Its own session it reaches.
	var chats struct{ Chats struct{ Edges []any } }
	call(t, cs, "list_chats", map[string]any{"sessionId": sess.ID}, &chats)
}

// TestUnauthenticated: without a token, or with a bad one, /mcp answers
// 401 with WWW-Authenticate: Bearer before reading anything of the body
// (the headers announce one that never comes); the SDK's client cannot
// connect.
func TestUnauthenticated(t *testing.T) {
	s := apptest.Start(t, apptest.Config(t))
	for _, token := range []string{"", "wgu_notAToken0123456789abcdefghijklmnopq"} {
		t.Run(fmt.Sprintf("token %q", token), func(t *testing.T) {
			conn, err := net.Dial("tcp", s.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "POST " + mcpserver.Path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n"
			if token != "" {
				head += "Authorization: Bearer " + token + "\r\n"
			}
			if _, err := conn.Write([]byte(head + "\r\n")); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer while the body is unsent: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%d, WWW-Authenticate %q; want 401 with Bearer", res.StatusCode, res.Header.Get("WWW-Authenticate"))
			}
		})
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wagraph-test", Version: "1"}, nil)
	if _, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + mcpserver.Path, MaxRetries: -1, DisableStandaloneSSE: true}, nil); err == nil {
		t.Error("the SDK's client connected without a token")
	}
}

// TestSwitches: --mcp-read-only offers the read-only tools alone (a send
// is an unknown tool); --mcp=false leaves /mcp not found.
func TestSwitches(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.MCP.ReadOnly = true
	s := apptest.Start(t, cfg)
	cs := connect(t, s, apptest.AdminToken)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	var want []string
	for name, ro := range readOnly {
		if ro {
			want = append(want, name)
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("read-only tools %v, want %v", names, want)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_text", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Errorf("send_text called in read-only mode: %+v", res)
	}

	off := apptest.Config(t)
	off.MCP.Enabled = false
	s = apptest.Start(t, off)
	r := s.Do(t, "POST", mcpserver.Path, apptest.AdminToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	if r.Status != http.StatusNotFound {
		t.Errorf("--mcp=false: POST %s answered %d, want 404", mcpserver.Path, r.Status)
	}
}

// TestRateLimit: each call is a request the per-user rate limit charges,
// as REST's and GraphQL's are: past the burst a call is refused 429.
func TestRateLimit(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.Rate = config.Rate{Per: 0.01, Burst: 4}
	s := apptest.Start(t, cfg)
	cs := connect(t, s, apptest.AdminToken) // its initialize is one of the four
	ok := 0
	for ; ok < 10; ok++ {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_sessions"})
		if err != nil {
			if !strings.Contains(err.Error(), "Too Many Requests") {
				t.Errorf("call %d refused with %v; want 429 Too Many Requests", ok+1, err)
			}
			break
		}
	}
	if ok > 3 {
		t.Errorf("%d calls let in after connecting, with a burst of 4: the rate limit does not charge tool calls", ok)
	}
}

// TestEveryTool: the tools TestAgent does not drive answer within their
// outputSchema (the server checks structuredContent against it) and reach
// what their fields reach: a group created through GraphQL in list_groups
// and group_info, a number checked, a contact found, an image that
// reaches the phone with its caption, a reaction to it.
func TestEveryTool(t *testing.T) {
	s, sess := apptest.StartLinked(t)
	cs := connect(t, s, apptest.AdminToken)
	n := s.Network(t)
	const ben = "4915550360005"
	if _, err := n.SendText(ben, apptest.LinkedPhone, "Ben here"); err != nil {
		t.Fatal(err)
	}

	var created struct{ CreateGroup struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $p: [String!]) { createGroup(sessionId: $s, input: {subject: "Agents", participants: $p}) { id } }`,
		map[string]any{"s": sess.ID, "p": []string{ben}}, &created)
	var groups struct{ Groups []struct{ ID, Name string } }
	call(t, cs, "list_groups", map[string]any{"sessionId": sess.ID}, &groups)
	if !slices.ContainsFunc(groups.Groups, func(g struct{ ID, Name string }) bool { return g.ID == created.CreateGroup.ID && g.Name == "Agents" }) {
		t.Errorf("list_groups: %+v, want %s", groups, created.CreateGroup.ID)
	}
	var info struct {
		Group struct {
			ID, Name     string
			Participants []struct{ Phone string }
		}
	}
	call(t, cs, "group_info", map[string]any{"sessionId": sess.ID, "jid": created.CreateGroup.ID}, &info)
	if info.Group.Name != "Agents" || !slices.ContainsFunc(info.Group.Participants, func(p struct{ Phone string }) bool { return p.Phone == ben }) {
		t.Errorf("group_info: %+v, want Agents with %s", info, ben)
	}

	var checks struct {
		CheckNumbers []struct {
			Number     string
			OnWhatsApp bool
		}
	}
	call(t, cs, "check_numbers", map[string]any{"sessionId": sess.ID, "numbers": []string{ben}}, &checks)
	if len(checks.CheckNumbers) != 1 || !checks.CheckNumbers[0].OnWhatsApp {
		t.Errorf("check_numbers: %+v, want %s on WhatsApp", checks, ben)
	}
	testclient.Until(t, 10*time.Second, "search_contacts finds the contact who wrote", func() bool {
		var found struct {
			Contacts struct {
				Edges []struct{ Node struct{ Phone string } }
			}
		}
		call(t, cs, "search_contacts", map[string]any{"sessionId": sess.ID, "query": "360005"}, &found)
		return len(found.Contacts.Edges) == 1 && found.Contacts.Edges[0].Node.Phone == ben
	})

	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	var media struct{ SendImage struct{ MessageID string } }
	call(t, cs, "send_media", map[string]any{"sessionId": sess.ID, "to": ben, "kind": "image",
		"source": base64.StdEncoding.EncodeToString(buf.Bytes()), "caption": "a picture"}, &media)
	testclient.Until(t, 15*time.Second, "the phone receives the image", func() bool {
		return slices.ContainsFunc(n.Inbox(ben), func(m wafake.Received) bool {
			return m.ID == media.SendImage.MessageID && m.Message.GetImageMessage().GetCaption() == "a picture"
		})
	})
	var reaction struct{ SendReaction struct{ MessageID string } }
	call(t, cs, "send_reaction", map[string]any{"sessionId": sess.ID, "messageId": media.SendImage.MessageID, "emoji": "👍"}, &reaction)
	if reaction.SendReaction.MessageID == "" {
		t.Errorf("send_reaction: %+v", reaction)
	}
	if res := callRaw(t, cs, "send_media", map[string]any{"sessionId": sess.ID, "to": ben, "kind": "sticker", "source": "x"}); !strings.HasPrefix(text(res), "BAD_USER_INPUT (argument kind)") {
		t.Errorf("an unknown kind: %q", text(res))
	}
}
