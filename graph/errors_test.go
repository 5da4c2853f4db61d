package graph_test

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/restcompat"
)

// TestErrorCodes: every GraphQL error carries an extensions.code of the
// contract, and bad input names the argument path in extensions.field.
func TestErrorCodes(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "e")
	admin := apptest.AdminToken
	tests := []struct {
		name, token, query string
		vars               map[string]any
		code, field, msg   string
	}{
		{"no token", "", `{ sessions { id } }`, nil, "UNAUTHENTICATED", "", "missing token"},
		{"bad token", "wgu_bad", `{ viewer { user { id } } }`, nil, "UNAUTHENTICATED", "", "invalid or revoked token"},
		{"syntax error", admin, `{ sessions { id }`, nil, "BAD_USER_INPUT", "", ""},
		{"unknown field", admin, `{ sessions { idd } }`, nil, "BAD_USER_INPUT", "", "idd"},
		{"unknown enum value", admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://a.com", events: [MESSAGES_UPSERT]}) { secret } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "", "MESSAGES_UPSERT"},
		{"variable of the wrong type", admin, `query($p: Int) { webhooks(sessionId: "x", page: $p) { total } }`, map[string]any{"p": "one"}, "BAD_USER_INPUT", "", ""},
		{"missing url", admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {displayName: "x"}) { secret } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "input.url", "url is required"},
		{"invalid url", admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "ftp://x"}) { secret } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "input.url", "absolute http or https URL"},
		{"webhook.test not selectable", admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://a.com", events: [WEBHOOK_TEST]}) { secret } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "input.events", "WEBHOOK_TEST cannot be selected"},
		{"bad header name", admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://a.com", headers: [{name: "Bad Name", value: "1"}]}) { secret } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "input.headers.Bad Name", "header name"},
		{"page 0", admin, `query($s: ID!) { webhooks(sessionId: $s, page: 0) { total } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "page", "page must be at least 1"},
		{"pageSize 1000", admin, `query($s: ID!) { webhooks(sessionId: $s, pageSize: 1000) { total } }`, map[string]any{"s": sid}, "BAD_USER_INPUT", "pageSize", "pageSize must be between 1 and 100"},
		{"session name too long", admin, `mutation($n: String) { createSession(name: $n) { token } }`, map[string]any{"n": strings.Repeat("x", 101)}, "BAD_USER_INPUT", "name", "at most 100"},
		{"empty user name", admin, `mutation { createUser(name: " ") { token } }`, nil, "BAD_USER_INPUT", "name", "name must not be empty"},
		{"empty token to revoke", admin, `mutation { revokeToken(token: "") }`, nil, "BAD_USER_INPUT", "token", "token must not be empty"},
		{"unknown token to revoke", admin, `mutation { revokeToken(token: "wgu_nothing") }`, nil, "NOT_FOUND", "", "token not found"},
		{"unknown session", admin, `mutation { deleteSession(id: "nope") }`, nil, "NOT_FOUND", "", "session nope not found"},
		{"unknown webhook", admin, `query($s: ID!) { webhook(sessionId: $s, id: "nope") { id } }`, map[string]any{"s": sid}, "NOT_FOUND", "", "webhook nope not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.GraphQL(t, tt.token, tt.query, tt.vars)
			if len(res.Errors) == 0 {
				t.Fatalf("no error; data %s", res.Data)
			}
			e := res.Errors[0]
			if e.Code() != tt.code {
				t.Errorf("extensions.code %q, want %q (%s)", e.Code(), tt.code, e.Message)
			}
			if field, _ := e.Extensions["field"].(string); field != tt.field {
				t.Errorf("extensions.field %q, want %q", field, tt.field)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
		})
	}
}

// TestOneClassification: the same refusal through REST and GraphQL has the
// same message, and its status and code come from the same fault code.
func TestOneClassification(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "e")
	admin := apptest.AdminToken
	tests := []struct {
		name       string
		code       fault.Code
		method     string
		path, body string
		query      string
	}{
		{"invalid url", fault.Invalid, "POST", "/session/" + sid + "/webhook", `{"url":"http://10.0.0.1/h"}`,
			`mutation { createWebhook(sessionId: "` + sid + `", input: {url: "http://10.0.0.1/h"}) { secret } }`},
		{"unknown session", fault.NotFound, "DELETE", "/session/nope", ``, `mutation { deleteSession(id: "nope") }`},
		{"page 0", fault.Invalid, "GET", "/session/" + sid + "/webhook?page=0", ``,
			`{ webhooks(sessionId: "` + sid + `", page: 0) { total } }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest := srv.REST(t, tt.method, tt.path, admin, tt.body)
			gql := srv.GraphQL(t, admin, tt.query, nil)
			if rest.Status != restcompat.StatusOf(tt.code) {
				t.Errorf("REST status %d, want %d", rest.Status, restcompat.StatusOf(tt.code))
			}
			if len(gql.Errors) != 1 || gql.Errors[0].Code() != graph.ExtensionCode(tt.code) {
				t.Fatalf("GraphQL errors %+v, want %s", gql.Errors, graph.ExtensionCode(tt.code))
			}
			if rm, gm := rest.Message(t), gql.Errors[0].Message; rm != gm {
				t.Errorf("REST says %q, GraphQL says %q", rm, gm)
			}
		})
	}
}

// TestInternalErrorsStayInside: when storage fails, the client learns only
// that an internal error happened and its request id; never the cause.
func TestInternalErrorsStayInside(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	if err := srv.App.Close(); err != nil {
		t.Fatal(err)
	}
	gql := srv.GraphQL(t, apptest.AdminToken, `{ sessions { id } }`, nil)
	if len(gql.Errors) == 0 || gql.Errors[0].Code() != "INTERNAL" {
		t.Fatalf("GraphQL: %+v, want INTERNAL", gql.Errors)
	}
	rest := srv.REST(t, "GET", "/session", apptest.AdminToken, "")
	if rest.Status != 500 {
		t.Fatalf("REST status %d, want 500", rest.Status)
	}
	for _, msg := range []string{gql.Errors[0].Message, rest.Message(t)} {
		if !strings.HasPrefix(msg, "internal error (request id ") {
			t.Errorf("message %q does not carry only the request id", msg)
		}
		if strings.Contains(strings.ToLower(msg), "sql") || strings.Contains(msg, "closed") {
			t.Errorf("message %q leaks the cause", msg)
		}
	}
	if id := rest.Header.Get("X-Request-Id"); id == "" || !strings.Contains(rest.Message(t), id) {
		t.Errorf("REST message %q does not name the X-Request-Id %q", rest.Message(t), id)
	}
}
