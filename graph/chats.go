package graph

import (
	"context"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/whatsapp"
)

// firstOr is a list's first argument with its schema default.
func firstOr(first *int, def int) int {
	if first == nil {
		return def
	}
	return *first
}

// chatArgument reads a chat argument (phone, user JID, LID, group JID).
func chatArgument(field, s string) (whatsapp.JID, error) {
	return whatsapp.ParseRecipient(field, s)
}

// toMessages is stored messages as the schema shows them, each sender
// with the phone and LID the session learned, read in one query.
func (r *Resolver) toMessages(ctx context.Context, sessionID string, ms []*ent.Message) ([]*model.Message, error) {
	senders := make([]string, 0, len(ms))
	for _, m := range ms {
		senders = append(senders, m.Sender)
	}
	people, err := r.ChatStore.People(ctx, sessionID, senders)
	if err != nil {
		return nil, err
	}
	out := make([]*model.Message, len(ms))
	for i, m := range ms {
		out[i] = toMessage(m)
		p := people[m.Sender]
		out[i].SenderPhone, out[i].SenderLid = optional(p.Phone), optional(p.LID)
	}
	return out, nil
}

// toChats is chats as the schema shows them.
func (r *Resolver) toChats(ctx context.Context, sessionID string, cs []chats.Chat) ([]*model.Chat, error) {
	var lasts []*ent.Message
	for _, c := range cs {
		if c.LastMessage != nil {
			lasts = append(lasts, c.LastMessage)
		}
	}
	ms, err := r.toMessages(ctx, sessionID, lasts)
	if err != nil {
		return nil, err
	}
	out := make([]*model.Chat, len(cs))
	for i, c := range cs {
		row := c.Row
		out[i] = &model.Chat{
			Jid: row.Jid, Name: optional(c.Name), IsGroup: row.IsGroup, Phone: optional(c.Person.Phone), Lid: optional(c.Person.LID),
			UnreadCount: row.UnreadCount, LastMessageAt: row.LastMessageAt, Archived: row.Archived, Pinned: row.Pinned,
			MutedUntil: row.MutedUntil,
		}
		if c.LastMessage != nil {
			out[i].LastMessage, ms = ms[0], ms[1:]
		}
	}
	return out, nil
}

func toContact(c *ent.Contact) *model.Contact {
	return &model.Contact{Jid: c.Jid, Phone: optional(c.Phone), Lid: optional(c.Lid), Name: optional(c.Name),
		PushName: optional(c.PushName), BusinessName: optional(c.BusinessName)}
}

func endCursor(cursors []string) *string {
	if len(cursors) == 0 {
		return nil
	}
	return &cursors[len(cursors)-1]
}
