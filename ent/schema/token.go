package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Token is an API credential. Only the SHA-256 of the secret is kept: a leaked
// database does not leak working tokens.
type Token struct{ ent.Schema }

func (Token) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.Bytes("hash").Immutable().Unique().Sensitive(),
		field.Enum("kind").Values("user", "session").Immutable(),
		field.String("user_id").Immutable(),
		field.String("session_id").Optional().Nillable().Immutable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("revoked_at").Optional().Nillable(),
		// from_setting marks the admin token that WAGRAPH_ADMIN_TOKEN
		// brought in: when the setting changes, that token is revoked.
		field.Bool("from_setting").Default(false),
	}
}

func (Token) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("user", User.Type).Ref("tokens").Field("user_id").Unique().Required().Immutable(),
		edge.From("session", Session.Type).Ref("tokens").Field("session_id").Unique().Immutable(),
	}
}

func (Token) Indexes() []ent.Index {
	return []ent.Index{index.Fields("session_id")}
}
