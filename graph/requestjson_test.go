package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/apptest"
)

// TestListBounds (issue 31, findings 2 and 7): over GraphQL, a request
// whose JSON holds more values than any operation takes is refused before
// gqlgen builds them (a body of tiny strings cost ~37 MiB a MiB), naming
// the variable; a body cut at its limit is 413; markRead's ids and a
// send's mentions are bounded in count and in length by the domain,
// which names the argument and the rule.
func TestListBounds(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "bounds")
	strs := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	const (
		markRead = `mutation($s: ID!, $ids: [ID!]) { markRead(sessionId: $s, chat: "491701234567", messageIds: $ids) }`
		sendText = `mutation($s: ID!, $m: [String!]) { sendText(sessionId: $s, input: {number: "491701234567", text: "hi", mentions: $m}) { messageId } }`
	)
	for _, tt := range []struct {
		name, query string
		vars        map[string]any
		field, msg  string
	}{
		// Refused before GraphQL: no GraphQL path to name, the variable's.
		{"too many values", markRead, map[string]any{"s": sid, "ids": strs(graph.MaxRequestValues, "a")},
			"", "variables.ids: a GraphQL request may hold at most 10000 JSON values"},
		{"ids past the domain's bound", markRead, map[string]any{"s": sid, "ids": strs(1001, "a")},
			"messageIds", "messageIds must name at most 1000 messages (got 1001)"},
		{"an id of 16 KiB", markRead, map[string]any{"s": sid, "ids": []string{"a", strings.Repeat("A", 16<<10)}},
			"messageIds[1]", "messageIds[1] must be at most 128 bytes (got 16384)"},
		{"mentions past the domain's bound", sendText, map[string]any{"s": sid, "m": strs(1025, "491701234567")},
			"input.mentions", "mentions must name at most 1024 users (got 1025)"},
		{"a mention of 16 KiB", sendText, map[string]any{"s": sid, "m": []string{"491701234567" + strings.Repeat(" ", 16<<10) + "@s.whatsapp.net"}},
			"input.mentions[0]", "mentions[0] must be at most 128 characters (got 16411)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.GraphQL(t, apptest.AdminToken, tt.query, tt.vars)
			if len(res.Errors) == 0 {
				t.Fatalf("no error; data %s", res.Data)
			}
			e := res.Errors[0]
			field, _ := e.Extensions["field"].(string)
			if e.Code() != "BAD_USER_INPUT" || field != tt.field || !strings.HasPrefix(e.Message, tt.msg) {
				t.Errorf("%s %q (field %q), want BAD_USER_INPUT on %s saying %q", e.Code(), e.Message, field, tt.field, tt.msg)
			}
		})
	}

	t.Run("status of a refused body", func(t *testing.T) {
		body, _ := json.Marshal(map[string]any{"query": markRead, "variables": map[string]any{"s": sid, "ids": strs(graph.MaxRequestValues, "a")}})
		res := srv.Do(t, "POST", "/graphql", apptest.AdminToken, string(body), map[string]string{"Content-Type": "application/json"})
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), `"code":"BAD_USER_INPUT"`) {
			t.Errorf("%d %s; want 400 BAD_USER_INPUT", res.Status, res.Body)
		}
	})
	t.Run("GET variables", func(t *testing.T) {
		vars, _ := json.Marshal(map[string]any{"ids": strs(graph.MaxRequestValues, "a")})
		res := srv.Do(t, "GET", "/graphql?query="+url.QueryEscape("{ viewer { user { id } } }")+"&variables="+url.QueryEscape(string(vars)), apptest.AdminToken, "", nil)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "variables.ids: a GraphQL request may hold at most 10000 JSON values") {
			t.Errorf("%d %s; want 400 naming variables.ids", res.Status, res.Body)
		}
	})
	t.Run("a chunked body past 1 MiB", func(t *testing.T) {
		big := `{"query":"{ viewer { user { id } } }","variables":{"x":"` + strings.Repeat("x", 2<<20) + `"}}`
		req, _ := http.NewRequest("POST", srv.URL+"/graphql", io.MultiReader(strings.NewReader(big)))
		req.ContentLength = -1
		req.Header.Set("Authorization", apptest.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "request body is larger than the limit of 1 MiB") {
			t.Errorf("%d %s; want 413 naming the limit", res.StatusCode, b)
		}
	})
	t.Run("websocket", func(t *testing.T) {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/graphql", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ids, _ := json.Marshal(strs(graph.MaxRequestValues, "a"))
		for _, m := range []string{
			fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":%q}}`, apptest.AdminToken),
			`{"id":"1","type":"subscribe","payload":{"query":"subscription($k: [EventKind!]) { events(sessionId: \"` + sid + `\", kinds: $k) { id } }","variables":{"k":` + string(ids) + `}}}`,
		} {
			if err := conn.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, msg, err := conn.ReadMessage()
			if ce, ok := err.(*websocket.CloseError); ok {
				if ce.Code != 4400 || ce.Text != "Bad request: an operation may hold at most 10000 JSON values" {
					t.Errorf("closed %d %q; want 4400 naming the bound", ce.Code, ce.Text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(msg), "connection_ack") && !strings.Contains(string(msg), `"ping"`) {
				t.Fatalf("got %s; want the socket closed", msg)
			}
		}
	})
}
