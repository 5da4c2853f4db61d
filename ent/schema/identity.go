package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Identity is one person's phone number and LID as a session learned them
// together (message senders with both, contacts, chats, the account's own
// creds): the phone <-> LID map every message and contact the API returns
// is completed from, however it was addressed.
type Identity struct{ ent.Schema }

func (Identity) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		field.String("phone").NotEmpty(), // digits
		field.String("lid").NotEmpty(),   // …@lid
	}
}

func (Identity) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("identities").Field("session_id").Unique().Required().Immutable(),
	}
}

func (Identity) Indexes() []ent.Index {
	return []ent.Index{
		// A person by phone, and by LID: each maps to one of the other.
		index.Fields("session_id", "phone").Unique(),
		index.Fields("session_id", "lid").Unique(),
	}
}
