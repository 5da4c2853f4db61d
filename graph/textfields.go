package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/wagraph/wagraph/internal/textrule"
)

// refuseNUL refuses a field whose arguments hold a NUL in any string, at
// any depth (sendText's text, a caption, a file name, a push name, a
// group's subject, a webhook's headers, a session's name...), before its
// resolver runs: textrule's rule for client text, written once for every
// argument of the schema, as REST's decoder applies it to every body, but
// those marked @phoneText. The error names the argument's path (input.text).
func refuseNUL(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && fc.Field.Field != nil && len(fc.Field.Arguments) > 0 {
		var vars map[string]any
		if oc := graphql.GetOperationContext(ctx); oc != nil {
			vars = oc.Variables
		}
		for _, a := range fc.Field.Arguments {
			if a.Value == nil || phoneText(fc.Field.Definition, a.Name) {
				continue
			}
			v, err := a.Value.Value(vars)
			if err != nil {
				continue // gqlgen's own argument decoding reports it
			}
			if err := textrule.CheckValue(a.Name, v); err != nil {
				return nil, err
			}
		}
	}
	return next(ctx)
}

// phoneText reports whether argument name of field is marked @phoneText:
// what a simulated phone writes, which may hold a NUL as a phone's text may
// (the sandbox's controls; sandbox.graphqls).
func phoneText(field *ast.FieldDefinition, name string) bool {
	if field == nil {
		return false
	}
	a := field.Arguments.ForName(name)
	return a != nil && a.Directives.ForName("phoneText") != nil
}
