package graph

import (
	"reflect"
	"slices"
	"testing"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/sessionsettings"
)

// TestSettingsInputMatchesDomain: GraphQL's SessionSettingsInput (the
// model gqlgen generates from the schema) and the domain's Input have the
// same fields, so updateSettings hands every setting over: one added on
// one side only fails here.
func TestSettingsInputMatchesDomain(t *testing.T) {
	names := func(v any) []string {
		var out []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			out = append(out, typ.Field(i).Name)
		}
		slices.Sort(out)
		return out
	}
	if g, d := names(model.SessionSettingsInput{}), names(sessionsettings.Input{}); !slices.Equal(g, d) {
		t.Errorf("SessionSettingsInput has %v, sessionsettings.Input %v", g, d)
	}
}
