package restcompat_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/wagraph/wagraph/graph"
)

// insiderWords are words of the project's own history that a user of the
// API reference does not know: "seed" named the API the REST layer keeps
// compatible with.
var insiderWords = regexp.MustCompile(`(?i)\bseed`)

// apiDescriptions is every text the API reference shows, by where it
// shows it: the OpenAPI document's descriptions, summaries and titles, and
// the GraphQL schema's descriptions (types, fields, arguments, enum values,
// directives), as introspection and the playground show them.
func apiDescriptions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "description" || k == "summary" || k == "title") {
					out["openapi "+at+"/"+k] = s
					continue
				}
				walk(at+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", at, i), x)
			}
		}
	}
	walk("", loadOpenAPI(t))

	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}}).Schema()
	args := func(at string, as ast.ArgumentDefinitionList) {
		for _, a := range as {
			out[at+"("+a.Name+")"] = a.Description
		}
	}
	for name, def := range schema.Types {
		if def.BuiltIn {
			continue
		}
		out["graphql "+name] = def.Description
		for _, f := range def.Fields {
			out["graphql "+name+"."+f.Name] = f.Description
			args("graphql "+name+"."+f.Name, f.Arguments)
		}
		for _, e := range def.EnumValues {
			out["graphql "+name+"."+e.Name] = e.Description
		}
	}
	for name, d := range schema.Directives {
		if d.Position == nil || d.Position.Src.BuiltIn {
			continue
		}
		out["graphql @"+name] = d.Description
		args("graphql @"+name, d.Arguments)
	}
	return out
}

// TestDescriptionsInUsersWords: the API reference speaks in words its
// readers know. It said "seed operations" and "as in the seed API"
// (issue 30).
func TestDescriptionsInUsersWords(t *testing.T) {
	ds := apiDescriptions(t)
	if len(ds) < 500 {
		t.Fatalf("found %d descriptions: the walk missed the document or the schema", len(ds))
	}
	for at, d := range ds {
		if w := insiderWords.FindString(d); w != "" {
			t.Errorf("%s says %q: %q", at, w, d)
		}
	}
}

// TestMarkReadDescribesUnstoredIDs: markRead's descriptions, GraphQL and
// REST, say what happens to a named id the store does not hold, as the
// rules do it (internal/messaging's TestMarkReadRules): sent as given in a
// direct chat, NOT_FOUND in a group. They said every named message must be
// one the account received, which a direct chat's unknown id is not
// checked for (issue 30).
func TestMarkReadDescribesUnstoredIDs(t *testing.T) {
	ds := apiDescriptions(t)
	var rest string
	for _, o := range operations(t, loadOpenAPI(t)) {
		if o.op["operationId"] == "markRead" {
			rest, _ = o.op["description"].(string)
		}
	}
	for _, d := range []struct{ where, text, groupFails string }{
		{"GraphQL Mutation.markRead", ds["graphql Mutation.markRead"], "NOT_FOUND"},
		{"REST markRead", rest, "404"},
	} {
		flat := strings.Join(strings.Fields(d.text), " ")
		for _, want := range []string{"not stored is not checked", "in a direct chat its receipt is sent", "in a group it is " + d.groupFails} {
			if !strings.Contains(flat, want) {
				t.Errorf("%s does not say %q: %q", d.where, want, flat)
			}
		}
	}
}
