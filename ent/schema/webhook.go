package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Webhook is an HTTP endpoint that receives a session's events of the kinds it
// selected. The secret signs deliveries, so it is kept as issued.
type Webhook struct{ ent.Schema }

func (Webhook) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("session_id").Immutable(),
		field.String("url"),
		field.String("display_name").Default(""),
		field.Bool("enabled").Default(true),
		field.Strings("events"),
		field.JSON("headers", map[string]string{}),
		field.String("secret").Sensitive().Immutable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("updated_at").Default(time.Now),
	}
}

func (Webhook) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("webhooks").Field("session_id").Unique().Required().Immutable(),
		edge.To("deliveries", Delivery.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (Webhook) Indexes() []ent.Index {
	return []ent.Index{index.Fields("session_id", "created_at")}
}
