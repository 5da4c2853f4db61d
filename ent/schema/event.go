package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is one entry of a session's durable event log (events.md): the
// envelope as stored. seq is per session, strictly increasing and without
// gaps, assigned in commit order by internal/events.Log.
type Event struct{ ent.Schema }

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(), // "evt_" + a sortable unique id
		field.String("session_id").Immutable(),
		field.Int64("seq").Immutable().Positive(),
		field.String("kind").Immutable().NotEmpty(),
		// timestamp is the envelope's: when the log accepted the event;
		// retention counts from it.
		field.Time("timestamp").Immutable(),
		// data is the kind-specific JSON object, kept as written so a
		// replay hands out the same bytes as the live delivery did.
		field.Bytes("data").Immutable(),
		// key names the WhatsApp item the event stems from, when it has
		// one (a message, a receipt): WhatsApp sends again what was not
		// acknowledged, and a crash between commit and ack must not make
		// a second event of the same item (its webhook-id would differ).
		field.String("key").Optional().Nillable().Immutable(),
	}
}

func (Event) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("events").Field("session_id").Unique().Required().Immutable(),
		edge.To("deliveries", Delivery.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("session_id", "seq").Unique(),
		index.Fields("session_id", "key").Unique(), // NULL keys never collide
		index.Fields("timestamp"),
	}
}
