package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// StreamCursor is how far a session's event log has been published to a
// NATS JetStream stream (integrations.md §2): seq is the last event the
// stream acknowledged. It only grows (internal/natsstream writes it under
// that condition), so a process that lost the session's lease and still
// finishes a publish cannot move it back. Keyed by the stream's name too:
// a stream named anew gets the log from its start.
type StreamCursor struct{ ent.Schema }

func (StreamCursor) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "nats_cursors"}}
}

func (StreamCursor) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		field.String("stream").Immutable().NotEmpty(),
		field.Int64("seq").NonNegative(),
		field.Time("updated_at"),
	}
}

func (StreamCursor) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("stream_cursors").Field("session_id").Unique().Required().Immutable(),
	}
}

func (StreamCursor) Indexes() []ent.Index {
	return []ent.Index{index.Fields("session_id", "stream").Unique()}
}
