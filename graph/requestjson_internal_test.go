package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/messaging"
)

// TestCheckRequestJSON: a request's JSON is refused past its bound of
// values, naming where the bound was passed; at the bound, and malformed
// (gqlgen's to word), it passes.
func TestCheckRequestJSON(t *testing.T) {
	list := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`"a",`, n), ",") + "]" }
	for _, tt := range []struct {
		name, json string
		max        int
		field      string // "": passes
	}{
		{"a parameter of its own", `{"ids":` + list(9) + `}`, 10, "variables.ids"},
		// The request, query, variables and ids count four.
		{"at the bound", `{"query":"q","variables":{"ids":` + list(6) + `}}`, 10, ""},
		{"one past it", `{"query":"q","variables":{"ids":` + list(7) + `}}`, 10, "variables.ids"},
		{"a list of lists", `{"variables":{"m":[[1],[2],[3],[4],[5]]}}`, 10, "variables.m"},
		{"many members", `{"variables":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}}`, 10, "variables.i"},
		{"after a closed object", `{"extensions":{"a":{"b":1}},"variables":{"x":[1,2,3,4,5,6]}}`, 10, "variables.x"},
		{"a top-level list", list(10), 10, "the request"},
		{"empty objects and lists", `{"a":{},"b":[],"c":{"d":[]}}`, 10, ""},
		{"malformed", `{"variables":{"ids":["a","a","a","a","a","a","a","a","a","a",`, 100, ""},
		{"malformed past the bound", `{"variables":{"ids":` + list(20) + `,}`, 10, "variables.ids"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := ""
			if tt.name == "a parameter of its own" {
				root = "variables"
			}
			err := checkRequestJSON([]byte(tt.json), tt.max, root)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			want := fmt.Sprintf("%s: a GraphQL request may hold at most %d JSON values", tt.field, tt.max)
			if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != tt.field || !strings.HasPrefix(f.Message, want) {
				t.Fatalf("got %v; want %s naming %s", err, want, tt.field)
			}
		})
	}
}

// TestRequestBoundAboveTheDomain: a list one past a domain bound, in a
// request of its own, is within MaxRequestValues: the client sees the
// domain's own refusal, naming the argument and its rule.
func TestRequestBoundAboveTheDomain(t *testing.T) {
	for name, n := range map[string]int{"markRead's ids": messaging.MaxReadIDs, "mentions": messaging.MaxMentions} {
		if n+1+16 > MaxRequestValues {
			t.Errorf("%s: %d allowed, but a request holds at most %d values", name, n, MaxRequestValues)
		}
	}
}
