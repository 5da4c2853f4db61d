package graph_test

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

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

// TestKeyedSendMutations: every mutation answering a SendResult is one of
// internal/messaging's KeyedSends, and each of those takes an
// idempotencyKey (an argument of its own, or a field of its input).
func TestKeyedSendMutations(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	keyed := map[string]bool{}
	for _, k := range messaging.KeyedSends() {
		keyed[k.Mutation] = true
		f := schema.Mutation.Fields.ForName(k.Mutation)
		if f == nil {
			t.Errorf("messaging.KeyedSends names mutation %q, which the schema lacks", k.Mutation)
			continue
		}
		takesKey := f.Arguments.ForName("idempotencyKey") != nil
		for _, a := range f.Arguments {
			if in := schema.Types[a.Type.Name()]; in != nil && in.Kind == ast.InputObject && in.Fields.ForName("idempotencyKey") != nil {
				takesKey = true
			}
		}
		if !takesKey {
			t.Errorf("mutation %s sends a message but takes no idempotencyKey", k.Mutation)
		}
	}
	for _, f := range schema.Mutation.Fields {
		if f.Type.Name() == "SendResult" && !keyed[f.Name] {
			t.Errorf("mutation %s answers a SendResult but is not in messaging.KeyedSends: it must honour an idempotency key", f.Name)
		}
	}
}
