package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ScheduledSend is a send with a delay: stored when it was asked for, made by
// the scheduler when due, even after a restart. Its id is the message id
// reserved for it, so a send retried after a crash carries the same id and
// the recipient's phone drops the duplicate.
type ScheduledSend struct{ ent.Schema }

func (ScheduledSend) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("session_id").Immutable(),
		field.Time("due_at"),
		// payload is the validated send, media excluded (JSON).
		field.Bytes("payload"),
		// media is the prepared media, already fetched and converted, so a
		// send does not depend on a URL still answering later.
		field.Bytes("media").Optional().Nillable(),
		field.Enum("state").Values("pending", "sent", "failed").Default("pending"),
		field.Int("attempts").Default(0),
		field.String("last_error").Default(""),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("done_at").Optional().Nillable(),
		// paced: queued by the session's send rate rather than asked for
		// with a delay. The paced sends of a session go out in order: a
		// wait for the session moves them all together.
		field.Bool("paced").Default(false),
	}
}

func (ScheduledSend) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("scheduled_sends").Field("session_id").Unique().Required().Immutable(),
	}
}

func (ScheduledSend) Indexes() []ent.Index {
	return []ent.Index{index.Fields("state", "due_at")}
}
