package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestOperationCost: an operation costs one per root field it runs, aliases
// and fragments included (each fragment once, as gqlgen collects them);
// __typename runs nothing; at least one.
func TestOperationCost(t *testing.T) {
	tests := []struct {
		name, doc string
		want      int
	}{
		{"query", `{ viewer { user { id } } sessions { id } }`, 2},
		{"query of __typename", `{ __typename }`, 1},
		{"subscription", `subscription { sessionStatus(sessionId: "s") { id } }`, 1},
		{"one mutation", `mutation { revokeToken(token: "a") }`, 1},
		{"aliases", `mutation { a: revokeToken(token: "a") b: revokeToken(token: "b") c: revokeToken(token: "c") }`, 3},
		{"fragment", `mutation { ...M ...M } fragment M on Mutation { a: revokeToken(token: "a") b: revokeToken(token: "b") }`, 2},
		{"inline fragment", `mutation { x: revokeToken(token: "x") ... on Mutation { a: revokeToken(token: "a") } }`, 2},
		{"nested fragments", `mutation { ...A } fragment A on Mutation { a: revokeToken(token: "a") ...B } fragment B on Mutation { b: revokeToken(token: "b") ...A }`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.doc})
			if err != nil {
				t.Fatal(err)
			}
			if got := operationCost(doc, doc.Operations[0]); got != tt.want {
				t.Errorf("cost %d, want %d", got, tt.want)
			}
		})
	}
}

// TestMeasure: the limits hold on the document as written, and expansion
// is computed per fragment.
func TestMeasure(t *testing.T) {
	limits := DocumentLimits{Tokens: 1000, Selections: 20, Expanded: 40, Depth: 4, SameName: 2}
	g := &documentGuard{limits: limits}
	tests := []struct {
		name, doc, refusal string
	}{
		{"within", `{ viewer { user { id name } } sessions { id } }`, ""},
		{"too many selections", `{ a1: __typename a2: __typename a3: __typename a4: __typename a5: __typename a6: __typename a7: __typename a8: __typename a9: __typename a10: __typename a11: __typename a12: __typename a13: __typename a14: __typename a15: __typename a16: __typename a17: __typename a18: __typename a19: __typename a20: __typename a21: __typename }`, "21 selections"},
		{"expansion", `{ ...F6 } fragment F0 on Query { __typename } fragment F1 on Query { ...F0 ...F0 } fragment F2 on Query { ...F1 ...F1 } fragment F3 on Query { ...F2 ...F2 } fragment F4 on Query { ...F3 ...F3 } fragment F5 on Query { ...F4 ...F4 } fragment F6 on Query { ...F5 ...F5 }`, "selects more than 40 fields"},
		{"depth through a fragment", `{ viewer { ...U } } fragment U on Viewer { user { ... on User { id } } session { id } }`, ""},
		{"same name thrice", `{ id: __typename ...A ...B } fragment A on Query { id: __typename } fragment B on Query { id: __typename }`, "selects id 3 times"},
		{"same fragment twice counts once", `{ id: __typename ...A ...A } fragment A on Query { id: __typename }`, ""},
		{"cycle", `{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`, "spreads itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tt.doc})
			if err != nil {
				t.Fatal(err)
			}
			err = g.measure(doc)
			switch {
			case tt.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refusal != "" && (err == nil || !contains(err.Error(), tt.refusal)):
				t.Fatalf("got %v; want a refusal naming %q", err, tt.refusal)
			}
		})
	}
	deep := `{ __type(name: "Query") { fields { type { ofType { name } } } } }`
	doc, _ := parser.ParseQuery(&ast.Source{Input: deep})
	if err := g.measure(doc); err == nil || !contains(err.Error(), "nests fields 5 deep; the limit is 4") {
		t.Fatalf("depth 5: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
