package graph

import (
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestPlanEvents: which subscriptions take the lane: only the events field
// with a plain selection of Event's scalars.
func TestPlanEvents(t *testing.T) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	tests := []struct {
		query string
		ok    bool
		root  string
		n     int
	}{
		{`subscription { events(sessionId: "s") { id seq kind sessionId occurredAt data } }`, true, "events", 6},
		{`subscription { e: events(sessionId: "s") { __typename a: id b: id } }`, true, "e", 3},
		{`subscription { events(sessionId: "s") { id id } }`, false, "", 0},                             // merged by gqlgen
		{`subscription { events(sessionId: "s") { id ... on Event { seq } } }`, false, "", 0},           // fragment
		{`subscription { events(sessionId: "s") { id seq @include(if: true) } }`, false, "", 0},         // directive
		{`subscription { events(sessionId: "s") @skip(if: false) { id } }`, false, "", 0},               // directive on the root
		{`subscription S { events(sessionId: "s") { ...F } } fragment F on Event { id }`, false, "", 0}, // spread
	}
	for _, tt := range tests {
		doc, errs := gqlparser.LoadQuery(schema, tt.query)
		if errs != nil {
			t.Fatalf("%s: %v", tt.query, errs)
		}
		var op *ast.OperationDefinition = doc.Operations[0]
		p, ok := planEvents(op.SelectionSet)
		if ok != tt.ok || p.root != tt.root || len(p.fields) != tt.n {
			t.Errorf("%s: plan %+v, %v; want root %q, %d fields, %v", tt.query, p, ok, tt.root, tt.n, tt.ok)
		}
	}
}
