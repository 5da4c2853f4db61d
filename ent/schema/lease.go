package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Lease says which process of a cluster runs a session (operations.md,
// "Storage and several processes"): one row per session that was ever
// held. A released lease keeps its row (holder empty, expired) so that the
// fencing number only grows: the next holder's is one more, and a write
// conditioned on an older number cannot land. No foreign key: a deleted
// session's lease still names the process that must unlink its device
// (the row goes with that), and the balancer only takes leases of
// sessions that exist.
type Lease struct{ ent.Schema }

func (Lease) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "session_leases"}}
}

func (Lease) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable().NotEmpty().Unique(),
		// holder is the Node id of the process running the session; ""
		// when it was given back.
		field.String("holder").Default(""),
		// expires_at is on the database's clock: every process compares
		// it with the database's now(), so their clocks need not agree.
		field.Time("expires_at"),
		field.Int64("fence").Default(1),
	}
}

func (Lease) Indexes() []ent.Index {
	return []ent.Index{index.Fields("holder")}
}
