package graph_test

import (
	"encoding/json"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestWebhookPageRange: a far page is refused before (page-1)*pageSize can
// overflow, by GraphQL and REST alike with the same message, and the last
// allowed page is still served.
func TestWebhookPageRange(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "p")
	admin := apptest.AdminToken
	query := `query($s: ID!, $p: Int) { webhooks(sessionId: $s, page: $p) { page total } }`
	tests := []struct {
		page string
		want string // the message, "" when the page is served
	}{
		{"1000000", ""},
		{"1000001", "page must be between 1 and 1000000 (got 1000001)"},
		{"2147483647", "page must be between 1 and 1000000 (got 2147483647)"},
		{"9223372036854775807", "page must be between 1 and 1000000 (got 9223372036854775807)"},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			gql := srv.GraphQL(t, admin, query, map[string]any{"s": sid, "p": json.Number(tt.page)})
			rest := srv.REST(t, "GET", "/session/"+sid+"/webhook?page="+tt.page, admin, "")
			if tt.want == "" {
				if len(gql.Errors) != 0 || rest.Status != 200 {
					t.Fatalf("GraphQL errors %+v, REST %d %s; want the page served", gql.Errors, rest.Status, rest.Body)
				}
				return
			}
			if len(gql.Errors) != 1 {
				t.Fatalf("GraphQL errors %+v, want one", gql.Errors)
			}
			e := gql.Errors[0]
			if field, _ := e.Extensions["field"].(string); e.Code() != "BAD_USER_INPUT" || field != "page" || e.Message != tt.want {
				t.Errorf("GraphQL: %s field %q %q, want BAD_USER_INPUT field \"page\" %q", e.Code(), field, e.Message, tt.want)
			}
			if rest.Status != 400 || rest.Message(t) != tt.want {
				t.Errorf("REST: %d %s, want 400 %q", rest.Status, rest.Body, tt.want)
			}
		})
	}
}
