package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// viewerUserNeedsRecord reports whether the viewer query asks for a field of
// viewer.user that the principal does not hold, so that the user's row must
// be read. The principal holds the user's id, the same as the row's; its
// name and admin flag are not used to answer (admin is false for a session
// token whatever the user is, and a cached principal may be seconds old).
// Outside a GraphQL operation (a call from the REST layer) the answer is
// always yes.
func viewerUserNeedsRecord(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return true
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return true
	}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, nil) {
		if f.Name != "user" {
			continue
		}
		for _, uf := range graphql.CollectFields(oc, f.Selections, nil) {
			switch uf.Name {
			case "id", "__typename":
			default:
				return true
			}
		}
	}
	return false
}
