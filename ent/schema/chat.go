package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Chat is one chat of a session as its events told it (internal/chats):
// the chats list answers from these rows alone, without reading the
// message store, whatever the store's size.
type Chat struct{ ent.Schema }

func (Chat) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		// jid is the chat as messages name it: a user by phone JID when
		// known (else by LID), or a group. A chat first known by LID is
		// moved to the phone JID once the mapping is learned.
		field.String("jid").NotEmpty(),
		field.String("name").Optional(),
		field.Bool("is_group").Default(false),
		// lid is a user chat's LID, when known.
		field.String("lid").Optional(),
		field.Int("unread_count").Default(0),
		// counted_row is the message store's row id of the newest received
		// message counted in unread_count: a message WhatsApp sends again
		// keeps its first row, so it is never counted twice.
		field.Int("counted_row").Default(0),
		// last_message_id is the newest message by (timestamp, row); empty
		// when none is stored (a chat known from app state or a group
		// joined).
		field.String("last_message_id").Optional(),
		field.Time("last_message_at").Optional().Nillable(),
		// active_at and active_row order the list: the last message's time
		// and row, or when the chat became known and 0 for a chat without
		// a stored message. Ties on time (WhatsApp's are whole seconds)
		// put the later-stored first.
		field.Time("active_at"),
		field.Int("active_row").Default(0),
		field.Bool("archived").Default(false),
		field.Bool("pinned").Default(false),
		// muted_until is when a mute ends (far in the future for ever);
		// null: not muted.
		field.Time("muted_until").Optional().Nillable(),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

func (Chat) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("chats").Field("session_id").Unique().Required().Immutable(),
	}
}

func (Chat) Indexes() []ent.Index {
	return []ent.Index{
		// Every event about a chat finds its row by jid.
		index.Fields("session_id", "jid").Unique(),
		// The chats list, most recent first: a page is a range scan of
		// this index from the cursor, whatever the number of chats.
		index.Fields("session_id", "active_at", "active_row", "id"),
		// The same list with the archived filter.
		index.Fields("session_id", "archived", "active_at", "active_row", "id"),
		// A chat asked for by its LID (chat(jid: "…@lid")).
		index.Fields("session_id", "lid"),
	}
}
