package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
)

// FuzzDocumentGuard sends a document through the guard as a request would
// (parse under the token limit, measure, validate under its deadline) with
// small limits, so the fuzzer reaches each of them. Whatever the document,
// the guard answers; a document it accepts is measured again here, the
// naive way (fragments expanded where they are spread, with a budget of
// work), and must be within every limit.
func FuzzDocumentGuard(f *testing.F) {
	for _, s := range []string{
		`{ viewer { user { id name } } sessions { id } }`,
		`query Q($id: ID!) { session(id: $id) { id status } }`,
		`mutation { a: revokeToken(token: "a") b: revokeToken(token: "b") }`,
		`subscription { sessionStatus(sessionId: "s") { id } }`,
		`{ ...F2 } fragment F0 on Query { __typename } fragment F1 on Query { ...F0 ...F0 } fragment F2 on Query { ...F1 ...F1 }`,
		`{ id: __typename ...A ...B } fragment A on Query { id: __typename } fragment B on Query { id: __typename }`,
		`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
		`{ __type(name: "Query") { fields { type { ofType { name } } } } }`,
		`{ viewer { ...U } } fragment U on Viewer { user { ... on User { id } } }`,
		`{ ... on Query { ... on Query { __typename } } }`,
		`{ a`,
	} {
		f.Add(s)
	}
	limits := DocumentLimits{Tokens: 400, Selections: 40, Expanded: 60, Depth: 5, SameName: 2, Validate: DefaultDocumentLimits.Validate}
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	f.Fuzz(func(t *testing.T, query string) {
		g := newDocumentGuard(schema, lru.New[*ast.QueryDocument](10), limits, false, nil)
		doc, gerr := g.document(context.Background(), query)
		if gerr != nil {
			if gerr.Message == "" {
				t.Fatalf("%q: refused without a message", query)
			}
			return
		}
		if doc == nil {
			t.Fatalf("%q: neither a document nor an error", query)
		}
		checkWithinLimits(t, query, doc, limits)
	})
}

// checkWithinLimits measures doc without the guard's memo: every spread is
// expanded where it stands. A budget of work stops a document whose unknown
// fragments are spread exponentially often (they add nothing, so the guard
// rightly accepts it); what was measured by then must still be in bounds.
func checkWithinLimits(t *testing.T, query string, doc *ast.QueryDocument, l DocumentLimits) {
	t.Helper()
	written := 0
	var count func(ast.SelectionSet)
	count = func(set ast.SelectionSet) {
		for _, s := range set {
			written++
			switch s := s.(type) {
			case *ast.Field:
				count(s.SelectionSet)
			case *ast.InlineFragment:
				count(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		count(op.SelectionSet)
	}
	for _, fr := range doc.Fragments {
		count(fr.SelectionSet)
	}
	if written > l.Selections {
		t.Fatalf("%q accepted with %d selections; the limit is %d", query, written, l.Selections)
	}
	budget := 100_000
	for _, op := range doc.Operations {
		size, depth := 0, 0
		var expand func(set ast.SelectionSet, level int, path []string)
		expand = func(set ast.SelectionSet, level int, path []string) {
			same := map[string]int{}
			sameLevel(doc, set, same, map[string]bool{})
			for name, n := range same {
				if n > l.SameName {
					t.Fatalf("%q accepted selecting %s %d times in one set; the limit is %d", query, name, n, l.SameName)
				}
			}
			for _, s := range set {
				if budget--; budget < 0 {
					return
				}
				switch s := s.(type) {
				case *ast.Field:
					size++
					depth = max(depth, level+1)
					expand(s.SelectionSet, level+1, path)
				case *ast.InlineFragment:
					expand(s.SelectionSet, level, path)
				case *ast.FragmentSpread:
					for _, p := range path {
						if p == s.Name {
							t.Fatalf("%q accepted although fragment %s spreads itself", query, s.Name)
						}
					}
					if fr := doc.Fragments.ForName(s.Name); fr != nil {
						expand(fr.SelectionSet, level, append(path[:len(path):len(path)], s.Name))
					}
				}
				if size > l.Expanded || depth > l.Depth {
					t.Fatalf("%q accepted although operation %q expands to %d fields (limit %d) or %d deep (limit %d)", query, op.Name, size, l.Expanded, depth, l.Depth)
				}
			}
		}
		expand(op.SelectionSet, 0, nil)
	}
}

// sameLevel counts the fields of one selection set by response name, with
// those its fragments bring at that level, each fragment once, as
// validation collects them.
func sameLevel(doc *ast.QueryDocument, set ast.SelectionSet, counts map[string]int, seen map[string]bool) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			counts[name]++
		case *ast.InlineFragment:
			sameLevel(doc, s.SelectionSet, counts, seen)
		case *ast.FragmentSpread:
			if fr := doc.Fragments.ForName(s.Name); fr != nil && !seen[s.Name] {
				seen[s.Name] = true
				sameLevel(doc, fr.SelectionSet, counts, seen)
			}
		}
	}
}
