package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Delivery is one event owed to one webhook (events.md, Webhook delivery):
// stored in the transaction that stores the event, before any attempt, so
// delivery is at least once and survives restarts; its state is only this
// row and its attempts.
type Delivery struct{ ent.Schema }

func (Delivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(), // "dlv_" + a sortable unique id
		field.String("event_id").Immutable(),
		field.String("webhook_id").Immutable(),
		field.Enum("status").Values("PENDING", "DELIVERED", "FAILED").Default("PENDING"),
		field.Int("attempts").Default(0), // attempts made so far
		// next_attempt_at is when a PENDING delivery is due; the first
		// attempt is due when the event is stored.
		field.Time("next_attempt_at"),
		field.Int("last_status_code").Optional().Nillable(), // nil: no answer (network error, timeout) or no attempt yet
		field.Int64("last_duration_ms").Optional().Nillable(),
		field.String("last_error").Default(""),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now),
	}
}

func (Delivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("event", Event.Type).Ref("deliveries").Field("event_id").Unique().Required().Immutable(),
		edge.From("webhook", Webhook.Type).Ref("deliveries").Field("webhook_id").Unique().Required().Immutable(),
		edge.To("attempt_log", Attempt.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (Delivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "next_attempt_at"), // the dispatcher claims due deliveries
		index.Fields("webhook_id", "created_at"),  // a webhook's delivery log
		index.Fields("event_id"),
	}
}
