package graph_test

import (
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/messaging"
)

// TestSendKindMutations: every kind of send of internal/messaging's table
// has its mutation in the schema, answering a SendResult.
func TestSendKindMutations(t *testing.T) {
	mutation := graph.NewExecutableSchema(graph.Config{}).Schema().Mutation
	for _, k := range messaging.KindTable() {
		f := mutation.Fields.ForName(k.Mutation)
		switch {
		case f == nil:
			t.Errorf("kind %s: the schema has no mutation %q", k.Name, k.Mutation)
		case f.Type.Name() != "SendResult":
			t.Errorf("kind %s: mutation %s answers %s, want SendResult", k.Name, k.Mutation, f.Type)
		}
	}
}
