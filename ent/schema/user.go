// Package schema declares wagraph's stored entities. ent generates the storage
// code in package ent from these declarations.
package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// User owns sessions; an admin user reaches every session and may create users.
type User struct{ ent.Schema }

func (User) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("name").NotEmpty(),
		field.Bool("admin").Default(false),
		field.Time("created_at").Immutable().Default(time.Now),
	}
}

func (User) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("sessions", Session.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("tokens", Token.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}
