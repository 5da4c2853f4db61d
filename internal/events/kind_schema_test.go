package events

import (
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestSchemaEnumIsTheKindTable: the GraphQL enum EventKind, written in the
// schema, is this package's table (Selectable, then WebhookTest) in the
// same order, each value the kind's Enum: graph and restcompat convert
// through Enum and FromEnum, so a kind added on one side only fails here.
func TestSchemaEnumIsTheKindTable(t *testing.T) {
	const path = "../../graph/webhook.graphqls"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, gerr := parser.ParseSchema(&ast.Source{Name: path, Input: string(src)})
	if gerr != nil {
		t.Fatalf("parse %s: %v", path, gerr)
	}
	def := doc.Definitions.ForName("EventKind")
	if def == nil || def.Kind != ast.Enum {
		t.Fatalf("%s declares no enum EventKind", path)
	}
	var schema []string
	for _, v := range def.EnumValues {
		schema = append(schema, v.Name)
	}
	var table []string
	for _, k := range append(Selectable(), WebhookTest) {
		table = append(table, k.Enum())
	}
	if !slices.Equal(schema, table) {
		t.Errorf("enum EventKind in %s is\n%v\nthe kind table is\n%v", path, schema, table)
	}
}
