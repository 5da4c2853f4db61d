package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Node is one live process of a cluster: where the others reach it and
// the key they sign their forwarded calls with. A process writes its row
// at start, renews it with its leases and deletes it when it stops; a row
// past expires_at is a process that died.
type Node struct{ ent.Schema }

func (Node) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "cluster_nodes"}}
}

func (Node) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("advertise_addr").Immutable(),
		// secret signs the calls forwarded to this process. Anyone who
		// reads the database can already do everything, so keeping it
		// there adds no exposure and needs no setting.
		field.Bytes("secret").Immutable().Sensitive(),
		field.Time("started_at").Immutable(),
		field.Time("expires_at"),
	}
}
