package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Attempt is one try of a delivery, kept for the delivery log (events.md:
// every attempt is logged with its number, status code, duration, error and
// time).
type Attempt struct{ ent.Schema }

func (Attempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("delivery_id").Immutable(),
		field.Int("n").Immutable().Positive(),                      // 1 for the first attempt
		field.Int("status_code").Optional().Nillable().Immutable(), // nil: no HTTP answer
		field.Int64("duration_ms").Immutable(),
		field.String("error").Default("").Immutable(),
		field.Time("at").Immutable(),
	}
}

func (Attempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", Delivery.Type).Ref("attempt_log").Field("delivery_id").Unique().Required().Immutable(),
	}
}

func (Attempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("delivery_id", "n").Unique()}
}
