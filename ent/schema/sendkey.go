package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SendKey is an idempotency key of a send: the client's key, the request it
// came with (a fingerprint) and the message id reserved for it before the
// send was made, then its outcome. A send retried with the key finds the
// first one's outcome, or, when the process making it died, makes it again
// with the same message id, which the recipient's phone keeps once. Kept 24
// hours.
type SendKey struct{ ent.Schema }

func (SendKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		field.String("key").Immutable().NotEmpty(),
		// fingerprint is the SHA-256 of the request (hex): the same key
		// with another request is refused.
		field.String("fingerprint").Immutable(),
		field.String("message_id").Immutable(),
		field.Enum("state").Values("pending", "done").Default("pending"),
		// owner is the process instance making the send while pending.
		field.String("owner"),
		field.Time("claimed_at"),
		field.Time("created_at").Immutable(),
		// The outcome: sent at timestamp, or stored for scheduled_at.
		field.Time("timestamp").Optional().Nillable(),
		field.Time("scheduled_at").Optional().Nillable(),
		// recipient is who WhatsApp addressed (the adapter's Identity as
		// JSON), kept opaque so storage does not depend on the adapter.
		field.Bytes("recipient").Optional(),
	}
}

func (SendKey) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("send_keys").Field("session_id").Unique().Required().Immutable(),
	}
}

func (SendKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("session_id", "key").Unique(),
		index.Fields("created_at"),
	}
}
