package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

// seedEvents stores n events of about size bytes of data each in session
// sess, in batches.
func seedEvents(t testing.TB, s *apptest.Server, sess string, n, size int) {
	t.Helper()
	text := strings.Repeat("x", size)
	for done := 0; done < n; {
		batch := make([]events.New, min(100, n-done))
		for i := range batch {
			data, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("3EB0%06d", done+i), "chat": "491701234567@s.whatsapp.net", "type": "text", "text": text})
			batch[i] = events.New{Kind: events.InboundMessageUpsert, Data: data}
		}
		if _, err := s.App.Bus().Publish(context.Background(), sess, batch); err != nil {
			t.Fatal(err)
		}
		done += len(batch)
	}
}

// aliasedPages is the attack of issue 21, finding 2: aliases of the
// largest events page in one 1.7 KB document.
func aliasedPages(aliases int) string {
	var b strings.Builder
	b.WriteString("query($s: ID!) {")
	for i := range aliases {
		fmt.Fprintf(&b, " e%d: events(sessionId: $s, first: 500) { edges { node { id seq kind data } } }", i)
	}
	b.WriteString(" }")
	return b.String()
}

// TestCostRefusesAliasedPages: 20 aliases of events(first: 500) cost
// 20 × (1 + 500 × 6) and are refused before anything runs: one error naming
// the cost and the limit, no data. (gqlgen's own complexity counted each
// alias as 7 and ran all of them.)
func TestCostRefusesAliasedPages(t *testing.T) {
	s := apptest.Start(t, apptest.Config(t))
	sess := s.CreateSession(t, "cost")
	seedEvents(t, s, sess, 20, 100)
	res := s.GraphQL(t, apptest.AdminToken, aliasedPages(20), map[string]any{"s": sess})
	if len(res.Errors) != 1 {
		t.Fatalf("%d errors, data %.200s; want one refusal", len(res.Errors), res.Data)
	}
	e := res.Errors[0]
	if e.Code() != "BAD_USER_INPUT" || !strings.Contains(e.Message, "costs 60020; the limit is 10000") {
		t.Errorf("refusal %s %q; want BAD_USER_INPUT naming the cost 60020 and the limit 10000", e.Code(), e.Message)
	}
	if len(res.Data) != 0 && string(res.Data) != "null" {
		t.Errorf("data %.200s; want none: nothing runs", res.Data)
	}
	// A variable page size is read as the resolver reads it.
	one := `query($s: ID!, $n: Int) { a: events(sessionId: $s, first: $n) { edges { node { id seq kind data } } } b: events(sessionId: $s, first: $n) { edges { node { id seq kind data } } } }`
	res = s.GraphQL(t, apptest.AdminToken, one, map[string]any{"s": sess, "n": 500})
	if len(res.Errors) != 0 {
		t.Fatalf("two pages of 500 (cost 6002) refused: %+v", res.Errors)
	}
	res = s.GraphQL(t, apptest.AdminToken, strings.ReplaceAll(one, "} } } }", "} } } c: events(sessionId: $s, first: $n) { edges { node { id seq kind data } } } d: events(sessionId: $s, first: $n) { edges { node { id seq kind data } } } }"), map[string]any{"s": sess, "n": 500})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "costs 12004") {
		t.Fatalf("four pages of 500 given by a variable: %+v; want the cost 12004 refused", res.Errors)
	}
}

// TestCostLetsNormalQueriesPass: the dashboard's largest queries, a whole
// events page with every field and GraphiQL's introspection stay within
// the default limit and the answer bound.
func TestCostLetsNormalQueriesPass(t *testing.T) {
	s := apptest.Start(t, apptest.Config(t))
	sess := s.CreateSession(t, "normal")
	seedEvents(t, s, sess, 500, 200)
	var hook struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createWebhook(sessionId: $s, input: { url: "https://example.com/hook" }) { webhook { id } } }`,
		map[string]any{"s": sess}, &hook)
	queries := map[string]string{
		"deliveries page": `query($s: ID!, $w: ID!, $n: Int) {
           webhook(sessionId: $s, id: $w) { id url displayName enabled }
           deliveries(sessionId: $s, webhookId: $w, first: $n) {
             edges { node { id eventId event attempt status statusCode durationMs error createdAt
               attempts { n statusCode durationMs error at } } }
             pageInfo { hasNextPage } } }`,
		"webhooks page": `query($s: ID!) { webhooks(sessionId: $s, pageSize: 100) { total items { id url displayName enabled events headers { name value } createdAt updatedAt } } }`,
		"events page":   `query($s: ID!) { events(sessionId: $s, first: 500) { edges { cursor node { id seq kind sessionId occurredAt data } } pageInfo { hasNextPage endCursor } } }`,
		"sessions":      `{ viewer { user { id name admin } } sessions { id name status jid phone pushName createdAt connectedAt } }`,
		"introspection": introspectionQuery,
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			vars := map[string]any{}
			if strings.Contains(q, "$s") {
				vars["s"] = sess
			}
			if strings.Contains(q, "$w") {
				vars["w"], vars["n"] = hook.CreateWebhook.Webhook.ID, 100
			}
			if res := s.GraphQL(t, apptest.AdminToken, q, vars); len(res.Errors) != 0 {
				t.Fatalf("refused: %+v", res.Errors)
			}
		})
	}
}

// TestAnswerBoundedInBytes: an answer past the bound (16 MiB by default) is
// one PAYLOAD_TOO_LARGE error and no data, whatever the cost allowed: here
// one page of 450 events of 40 KB (cost 1,351; 18 MB of answer).
func TestAnswerBoundedInBytes(t *testing.T) {
	s := apptest.Start(t, apptest.Config(t))
	sess := s.CreateSession(t, "bytes")
	seedEvents(t, s, sess, 450, 40_000)
	q := `query($s: ID!) { events(sessionId: $s, first: 450) { edges { node { data } } } }`
	body, status := postRaw(t, s, q, map[string]any{"s": sess})
	if len(body) > 1<<20 {
		t.Fatalf("answer of %d bytes (HTTP %d); want a short refusal", len(body), status)
	}
	var res apptest.GQLResponse
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	if len(res.Errors) != 1 || res.Errors[0].Code() != "PAYLOAD_TOO_LARGE" || !strings.Contains(res.Errors[0].Message, "larger than 16 MiB") {
		t.Fatalf("errors %+v; want one PAYLOAD_TOO_LARGE naming 16 MiB", res.Errors)
	}
	if len(res.Data) != 0 && string(res.Data) != "null" {
		t.Errorf("data %.200s; want none", res.Data)
	}
	// A page within the bound is served.
	q = `query($s: ID!) { events(sessionId: $s, first: 100) { edges { node { data } } } }`
	if res := s.GraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess}); len(res.Errors) != 0 {
		t.Fatalf("a 4 MB page refused: %+v", res.Errors)
	}
}

// postRaw posts one operation as the admin and returns the body as sent.
func postRaw(t testing.TB, s *apptest.Server, query string, vars map[string]any) ([]byte, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", apptest.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b, resp.StatusCode
}

// introspectionQuery is GraphiQL's.
const introspectionQuery = `query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name }
 types { ...FullType } directives { name description locations args { ...InputValue } } } }
fragment FullType on __Type { kind name description fields(includeDeprecated: true) { name description args { ...InputValue }
 type { ...TypeRef } isDeprecated deprecationReason } inputFields { ...InputValue } interfaces { ...TypeRef }
 enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
 ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`
