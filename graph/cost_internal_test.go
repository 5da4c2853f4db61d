package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// TestOperationComplexity: a paged field costs its page size (argument,
// variable or the schema's default) times what one item selects, each
// alias and each fragment spread on its own; other fields 1 plus their
// children; introspection's __schema nothing.
func TestOperationComplexity(t *testing.T) {
	es := NewExecutableSchema(Config{})
	tests := []struct {
		name, doc string
		vars      map[string]any
		want      int
	}{
		{"default page", `{ events(sessionId: "s") { edges { node { id } } } }`, nil, 1 + 50*3},
		{"first", `{ events(sessionId: "s", first: 500) { edges { node { id seq kind data } } } }`, nil, 1 + 500*6},
		{"first from a variable", `query($n: Int) { events(sessionId: "s", first: $n) { edges { node { id } } } }`, map[string]any{"n": json.Number("200")}, 1 + 200*3},
		{"variable absent: the default", `query($n: Int) { events(sessionId: "s", first: $n) { edges { node { id } } } }`, nil, 1 + 50*3},
		{"explicit null: the default", `{ events(sessionId: "s", first: null) { edges { node { id } } } }`, nil, 1 + 50*3},
		{"below 1 costs as 1", `{ events(sessionId: "s", first: -5) { edges { node { id } } } }`, nil, 1 + 3},
		{"aliases", `{ a: events(sessionId: "s", first: 500) { edges { node { id } } } b: events(sessionId: "s", first: 500) { edges { node { id } } } }`, nil, 2 * (1 + 500*3)},
		{"fragment spread twice", `{ ...E ...E } fragment E on Query { events(sessionId: "s", first: 100) { edges { node { id } } } }`, nil, 2 * (1 + 100*3)},
		{"deliveries default", `{ deliveries(sessionId: "s", webhookId: "w") { edges { node { id attempts { n } } } } }`, nil, 1 + 20*(1+1+1+2)},
		{"webhooks pageSize", `{ webhooks(sessionId: "s", pageSize: 100) { total items { id } } }`, nil, 1 + 100*(1+2)},
		{"plain fields", `{ viewer { user { id name } } sessions { id } }`, nil, 4 + 2},
		{"introspection", `{ __schema { types { name fields { name } } } }`, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.doc})
			if err != nil {
				t.Fatal(err)
			}
			if errs := validator.ValidateWithRules(es.Schema(), doc, nil); len(errs) > 0 {
				t.Fatal(errs)
			}
			op := doc.Operations[0]
			vars, gerr := validator.VariableValues(es.Schema(), op, tt.vars)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if got := operationComplexity(context.Background(), pagedCost{es}, op, vars); got != tt.want {
				t.Errorf("cost %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSizeArgumentsHaveDefaults: every size argument of the schema has a
// default, so an absent one costs what the resolver serves.
func TestSizeArgumentsHaveDefaults(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	found := 0
	for _, def := range s.Types {
		for _, f := range def.Fields {
			for _, name := range sizeArguments {
				if a := f.Arguments.ForName(name); a != nil && a.Type.Name() == "Int" {
					found++
					if a.DefaultValue == nil {
						t.Errorf("%s.%s(%s) has no default", def.Name, f.Name, name)
					}
				}
			}
		}
	}
	if found < 3 { // events, deliveries, webhooks
		t.Errorf("%d size arguments found, want at least 3", found)
	}
}

// fakeCharger records what each operation is charged and refuses it, so
// nothing runs.
type fakeCharger struct{ charged []int }

func (c *fakeCharger) ChargeOperations(_ context.Context, n int) error {
	c.charged = append(c.charged, n)
	return fault.New(fault.RateLimited, "rate limit exceeded (test)")
}

// TestRootFieldsCharged: a query is charged one operation per root field,
// aliases included, as mutations are: 20 aliased events pages cost 20.
func TestRootFieldsCharged(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 20 {
		fmt.Fprintf(&b, ` e%d: events(sessionId: "s", first: 1) { edges { cursor } }`, i)
	}
	b.WriteString(" __typename }")
	tests := []struct {
		name, doc string
		want      int
	}{
		{"aliased queries", b.String(), 20},
		{"two root fields", `{ viewer { user { id } } sessions { id } }`, 2},
		{"aliased mutations", `mutation { a: revokeToken(token: "a") b: revokeToken(token: "b") }`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			charger := &fakeCharger{}
			srv := NewServer(&Resolver{}, slog.New(slog.DiscardHandler), ServerOptions{Charger: charger, ComplexityLimit: 100_000})
			body, _ := json.Marshal(map[string]any{"query": tt.doc})
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if len(charger.charged) != 1 || charger.charged[0] != tt.want {
				t.Fatalf("charged %v, want [%d]", charger.charged, tt.want)
			}
			if !strings.Contains(rec.Body.String(), "RATE_LIMITED") {
				t.Errorf("answer %s; want the charger's refusal", rec.Body.String())
			}
		})
	}
}

// TestLeafSize: the estimate counts a leaf's bytes as JSON would write
// them, unescaped.
func TestLeafSize(t *testing.T) {
	s := "abc"
	tests := []struct {
		v    any
		want int
	}{
		{"abc", 5},
		{&s, 5},
		{(*string)(nil), 4},
		{model.JSON(`{"a":1}`), 7},
		{model.EventKindInboundMessageUpsert, len(model.EventKindInboundMessageUpsert) + 2},
		{[]string{"a", "bc"}, 2 + 1 + 3 + 1 + 4},
		{42, 2},
		{(*time.Time)(nil), 4},
		{true, 4},
		{int64(-7), 2},
	}
	for _, tt := range tests {
		if got := leafSize(tt.v); got != tt.want {
			t.Errorf("leafSize(%#v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
