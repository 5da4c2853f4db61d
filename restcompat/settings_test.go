package restcompat

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph/model"
)

// jsonNames are the JSON names of the fields of v's type.
func jsonNames(v any) []string {
	var names []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestSettingsFieldsMatchSchema: the settings' REST body and answer name
// exactly the fields of GraphQL's SessionSettingsInput and SessionSettings
// (the models gqlgen generates from the schema): a setting added to the
// schema and not to REST, or the other way round, fails here.
func TestSettingsFieldsMatchSchema(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rest, graph any
	}{
		{"body", settingsRequest{}, model.SessionSettingsInput{}},
		{"answer", settingsJSON{}, model.SessionSettings{}},
	} {
		if r, g := jsonNames(tc.rest), jsonNames(tc.graph); !slices.Equal(r, g) {
			t.Errorf("the settings' REST %s has %v, GraphQL %v", tc.name, r, g)
		}
	}
}
