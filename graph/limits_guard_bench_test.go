package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
)

// BenchmarkDocumentGuard: the document guard alone, for the documents of
// BenchmarkGraphQL: "parse+validate" with no cache (parse, measure against
// the limits, gqlgen's validation rules: what a new document costs) and
// "cached" through the server's LRU (what a repeated document costs).
func BenchmarkDocumentGuard(b *testing.B) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	docs := []struct{ name, query string }{
		{"viewer", `{ viewer { user { id } } }`},
		{"sendText", `mutation($s: ID!, $in: SendTextInput!) { sendText(sessionId: $s, input: $in) { messageId timestamp } }`},
	}
	caches := []struct {
		name  string
		cache graphql.Cache[*ast.QueryDocument]
	}{
		{"parse+validate", graphql.NoCache[*ast.QueryDocument]{}},
		{"cached", lru.New[*ast.QueryDocument](1000)},
	}
	ctx := context.Background()
	for _, c := range caches {
		g := newDocumentGuard(schema, c.cache, DefaultDocumentLimits, false, nil)
		for _, d := range docs {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := g.MutateOperationParameters(ctx, &graphql.RawParams{Query: d.query}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
