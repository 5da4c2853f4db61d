package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Message is one message a session sent or received: the message store.
// Delete for everyone finds a message's chat here, and a quote its sender.
type Message struct{ ent.Schema }

func (Message) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").Immutable(),
		// message_id is WhatsApp's id: unique per sender, not globally, so
		// the store keys on (session, id) and keeps the first record.
		field.String("message_id").Immutable().NotEmpty(),
		field.String("chat"),
		field.String("sender"),
		field.Bool("from_me"),
		field.String("type"),
		field.String("text").Optional(),
		field.String("caption").Optional(),
		field.Enum("status").Values("received", "sent", "scheduled", "failed", "revoked"),
		field.Time("timestamp"),
		// media is what downloads the attachment of a media message again
		// (GET …/message/{id}/media); WhatsApp keeps the blob, not the key.
		// It is the adapter's whatsapp.MediaRef as JSON, kept opaque here so
		// storage does not depend on the WhatsApp adapter.
		field.Bytes("media").Optional(), // empty: no media
		// media_sha256 names the kept copy of the media in the media store
		// (internal/mediakeep, integrations.md §3): the route serves it
		// from there; null: not kept (yet, or skipped, or pruned), the
		// route downloads it from WhatsApp on demand.
		field.String("media_sha256").Optional().Nillable(),
		// media_due is when the keeper next tries to download the media
		// into the store; null: nothing to do (kept, skipped, given up).
		// It is set in the statement that records the message, so a
		// download owed is as durable as the message: a restart finds it.
		// Fields here rather than a table of jobs: the pending download is
		// written in the one insert the message costs anyway, in the event
		// log's batch (no second row per media message), and it goes with
		// the message (a session deleted, nothing left behind).
		field.Time("media_due").Optional().Nillable(),
		// media_tries counts the keeper's failed downloads (its backoff).
		field.Int("media_tries").Default(0),
		// read_at is when a received message was marked read (markRead, or
		// the chat read on another device); null: unread.
		field.Time("read_at").Optional().Nillable(),
		// reactions are the message's current reactions, one per person
		// (a new one replaces theirs, an empty one takes it back).
		field.JSON("reactions", []Reaction{}).Optional(),
		// poll is a poll's options and the votes counted so far (the
		// question is the text); null for other messages.
		field.JSON("poll", &Poll{}).Optional(),
		// view_once: an image, video or voice note its recipient may open
		// once. It is never forwarded, and its media is served once:
		// viewed_at is when the media route first served it (claimed as
		// the download starts, given back when it fails); null: not yet.
		field.Bool("view_once").Default(false),
		field.Time("viewed_at").Optional().Nillable(),
		// edited_at is when the sender's edit was applied; null: never
		// edited (Message.edited).
		field.Time("edited_at").Optional().Nillable(),
	}
}

// Poll is what a stored poll asks and how it was answered: each voter's
// latest vote, by option name.
type Poll struct {
	Options    []string   `json:"options"`
	Selectable int        `json:"selectable"` // 0: any number
	Votes      []PollVote `json:"votes,omitempty"`
}

// PollVote is one voter's current choice; an empty one was taken back and
// is not kept.
type PollVote struct {
	Voter   string    `json:"voter"` // the voter's JID, by phone when known
	Phone   string    `json:"phone,omitempty"`
	LID     string    `json:"lid,omitempty"`
	Options []string  `json:"options"`
	At      time.Time `json:"at"`
}

// Reaction is an emoji on a stored message, and who put it there.
type Reaction struct {
	Emoji  string `json:"emoji"`
	Sender string `json:"sender"` // the reacting account's JID
	FromMe bool   `json:"fromMe"`
}

func (Message) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("messages").Field("session_id").Unique().Required().Immutable(),
	}
}

func (Message) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("session_id", "message_id").Unique(),
		// A chat's messages newest first (messages(chat, before)): a page
		// is a range scan of this index from the cursor (timestamp, row id:
		// of two messages of the same second the later-stored comes
		// first), however deep in the history. Its prefix also answers
		// whether a chat is known (chats.upsert, for every message
		// stored) and a chat's unread messages (markRead).
		index.Fields("session_id", "chat", "timestamp", "id"),
		// The keeper's due downloads, per session (its fair claim), and
		// the messages referring to a kept file (deleting a session's
		// files, pruning): partial, so the messages with nothing pending
		// or kept (most of them) cost no index entry.
		index.Fields("session_id", "media_due").Annotations(entsql.IndexWhere("media_due IS NOT NULL")),
		index.Fields("media_sha256").Annotations(entsql.IndexWhere("media_sha256 IS NOT NULL")),
	}
}
