package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// worstDocuments are the costliest documents DefaultDocumentLimits let
// through to validation: OverlappingFieldsCanBeMerged compares the fields
// of one response name pairwise, and their sub-selections pairwise again,
// so each packs as many same-name fields as the limits allow.
func worstDocuments(l DocumentLimits) map[string]string {
	k := l.SameName
	docs := map[string]string{}

	// As many names as fit, each selected k times.
	var wide strings.Builder
	wide.WriteString("{ ")
	for i := range l.Selections / k {
		fmt.Fprintf(&wide, "%s", strings.Repeat(fmt.Sprintf("a%d: __typename ", i), k))
	}
	wide.WriteString("}")
	docs["wide"] = wide.String()

	// k same-name fields holding k same-name fields, as deep as the
	// expansion allows, through fragments.
	levels, size := 0, 0
	for p := k; size+p <= l.Expanded; p *= k {
		size += p
		levels++
	}
	var frag strings.Builder
	frag.WriteString("{ " + strings.Repeat(`__type(name: "Query") { ...L1 } `, k) + "}")
	for i := 1; i < levels-1; i++ {
		fmt.Fprintf(&frag, " fragment L%d on __Type { %s}", i, strings.Repeat(fmt.Sprintf("ofType { ...L%d } ", i+1), k))
	}
	fmt.Fprintf(&frag, " fragment L%d on __Type { %s}", levels-1, strings.Repeat("name ", k))
	docs["nested through fragments"] = frag.String()

	// The same written out, as deep as the written limit allows.
	inner := strings.Repeat("name ", k)
	for written := k + k*k; written*k <= l.Selections; written *= k {
		inner = strings.Repeat("ofType { "+inner+"} ", k)
	}
	docs["nested written"] = "{ " + strings.Repeat(`__type(name: "Query") { `+inner+"} ", k) + "}"

	// Same-name fields whose arguments conflict, the error path.
	docs["conflicting"] = "{ " + strings.Repeat(`a: __type(name: "Query") { name } a: __type(name: "Mutation") { name } `, k/2) + "}"
	return docs
}

// BenchmarkWorstDocument measures what a document within the limits costs
// to measure and validate: the limits keep it to milliseconds.
func BenchmarkWorstDocument(b *testing.B) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	g := newDocumentGuard(schema, nil, DefaultDocumentLimits, true, nil)
	for name, q := range worstDocuments(DefaultDocumentLimits) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: q}, DefaultDocumentLimits.Tokens)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.measure(doc); err != nil {
					b.Fatalf("the document is refused, so it is not a worst case within the limits: %v", err)
				}
				validator.ValidateWithRules(schema, doc, g.rules())
			}
		})
	}
}
