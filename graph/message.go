package graph

import (
	"context"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/messaging"
)

// send is every send mutation: reach the session, then the domain.
func (r *Resolver) send(ctx context.Context, sessionID string, req messaging.Request) (*model.SendResult, error) {
	if _, _, err := r.reachSession(ctx, sessionID); err != nil {
		return nil, err
	}
	res, err := r.Messages.Send(ctx, sessionID, req)
	if err != nil {
		return nil, inArgument("input", err)
	}
	return &model.SendResult{MessageID: res.MessageID, Timestamp: res.Timestamp, ScheduledAt: res.ScheduledAt}, nil
}

func toMessage(m *ent.Message) *model.Message {
	return &model.Message{
		ID: m.MessageID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type,
		Text: optional(m.Text), Caption: optional(m.Caption), Status: string(m.Status), Timestamp: m.Timestamp,
	}
}

func isTrue(b *bool) bool { return b != nil && *b }
