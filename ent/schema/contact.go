package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Contact is a person a session knows: from the phone's address book (app
// state, history sync) or from what WhatsApp told about them (push names,
// business names, message senders). internal/chats keeps it.
type Contact struct{ ent.Schema }

func (Contact) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		// jid is the person by phone JID when known, else by LID; a
		// contact known by LID moves to its phone JID once it is learned.
		field.String("jid").NotEmpty(),
		field.String("phone").Optional(), // digits
		field.String("lid").Optional(),   // …@lid
		// name is the address book's (full name, else first name).
		field.String("name").Optional(),
		field.String("push_name").Optional(),
		field.String("business_name").Optional(),
		// sort_name orders the list "by name": the first of name, push
		// name, business name and phone that is set, folded to lower case.
		field.String("sort_name"),
		// search holds every name and the phone, folded to lower case, so
		// contacts(search:) is one case-insensitive substring match alike
		// on SQLite and PostgreSQL.
		field.String("search"),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (Contact) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("contacts").Field("session_id").Unique().Required().Immutable(),
	}
}

func (Contact) Indexes() []ent.Index {
	return []ent.Index{
		// Every event about a person finds its row by jid.
		index.Fields("session_id", "jid").Unique(),
		// The contacts list by name: a page is a range scan from the
		// cursor (sort_name, id).
		index.Fields("session_id", "sort_name", "id"),
	}
}
