package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Session is one linked WhatsApp account (or one waiting to be linked).
type Session struct{ ent.Schema }

func (Session) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("name").Default(""),
		field.String("owner_id").Immutable(),
		field.Enum("status").
			Values("DISCONNECTED", "CONNECTING", "PAIRING", "CONNECTED", "LOGGED_OUT").
			Default("DISCONNECTED"),
		// Why the session is in its status when nobody asked for it
		// ("pairing timed out: ..."), kept with the status so that a restart
		// still says so.
		field.String("status_reason").Optional().Nillable(),
		field.String("jid").Optional().Nillable(),
		field.String("push_name").Optional().Nillable(),
		field.Time("created_at").Immutable().Default(time.Now),
		field.Time("connected_at").Optional().Nillable(),
		// When the reach-out timelock WhatsApp announced for the account
		// ends (whatsapp.Limits); null when it said nothing or lifted it.
		field.Time("reachout_timelock_until").Optional().Nillable(),
		// The session's settings (internal/sessionsettings holds their
		// rules and is the only writer): send_rate as given ("30/m");
		// send_jitter in milliseconds; proxy whole, its password too, for
		// the session's connection to use, hence Sensitive (never in
		// String()).
		field.String("send_rate").Optional().Nillable(),
		field.Int64("send_jitter_ms").Default(0),
		field.Bool("simulate_typing").Default(false),
		field.Bool("auto_mark_read").Default(false),
		field.Bool("auto_reject_calls").Default(false),
		field.String("call_reject_message").Default(""),
		field.String("proxy").Optional().Nillable().Sensitive(),
		// next_send_at is the send rate's next free slot: a send before it
		// is queued at it (internal/messaging, pace.go), read and moved
		// under the session row's lock.
		field.Time("next_send_at").Optional().Nillable(),
	}
}

func (Session) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", User.Type).Ref("sessions").Field("owner_id").Unique().Required().Immutable(),
		edge.To("tokens", Token.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("webhooks", Webhook.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("messages", Message.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("chats", Chat.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("contacts", Contact.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("identities", Identity.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("scheduled_sends", ScheduledSend.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("send_keys", SendKey.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("events", Event.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
		edge.To("stream_cursors", StreamCursor.Type).Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

func (Session) Indexes() []ent.Index {
	return []ent.Index{index.Fields("owner_id", "created_at")}
}
