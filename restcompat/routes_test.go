package restcompat

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// decodeAs decodes body strictly (decodeBody's rules: no unknown or
// duplicate key, the right types) into a new value of v's type.
func decodeAs(t *testing.T, v any, body string) error {
	t.Helper()
	dst := reflect.New(reflect.TypeOf(v)).Interface()
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return decodeBody(r, dst, false)
}

// TestRouteExamples: every example of the table is a value of the Go type
// it illustrates, read as strictly as a request body is. The document's
// schemas come from those types, so an example that drifted from its type
// fails here (and Redocly and Spectral check it against the schema).
func TestRouteExamples(t *testing.T) {
	for _, rt := range routes() {
		t.Run(rt.pattern(), func(t *testing.T) {
			if rt.body != nil {
				examples := rt.bodyExamples
				if rt.bodyExample != "" {
					examples = append(examples, namedExample{"", "", rt.bodyExample})
				}
				if len(examples) == 0 {
					t.Error("takes a body but shows no example of it")
				}
				for _, ex := range examples {
					if err := decodeAs(t, rt.body, ex.json); err != nil {
						t.Errorf("body example %s %s: %v", ex.name, ex.json, err)
					}
				}
			} else if rt.bodyExample != "" || len(rt.bodyExamples) > 0 {
				t.Error("a body example for a route that takes no body")
			}
			switch {
			case rt.data == nil && rt.describe == nil:
				t.Error("no answer described")
			case rt.data == nil:
			case rt.dataExample == "":
				t.Error("no example of the answer")
			default:
				if err := decodeAs(t, rt.data, rt.dataExample); err != nil {
					t.Errorf("answer example %s: %v", rt.dataExample, err)
				}
			}
		})
	}
}

// TestRouteTable: the table is complete and unambiguous.
func TestRouteTable(t *testing.T) {
	seen := map[string]string{}
	tags := map[string]bool{}
	for _, tg := range tagNames() {
		tags[tg] = true
	}
	for _, rt := range routes() {
		if prev, ok := seen[rt.id]; ok {
			t.Errorf("%s: operationId %s is also %s", rt.pattern(), rt.id, prev)
		}
		seen[rt.id] = rt.pattern()
		if !tags[rt.tag] {
			t.Errorf("%s: tag %q is not one of the document's tags", rt.pattern(), rt.tag)
		}
		if rt.serve == nil || rt.summary == "" || rt.description == "" || rt.answer == "" || rt.status == 0 {
			t.Errorf("%s: incomplete entry (handler, summary, description, answer and status are required)", rt.pattern())
		}
	}
}

func tagNames() []string {
	var out []string
	for _, tg := range tags() {
		out = append(out, tg.Name)
	}
	return out
}
