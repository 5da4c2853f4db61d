package graph

import (
	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/webhook"
)

func toUser(u *ent.User) *model.User {
	return &model.User{ID: u.ID, Name: u.Name, Admin: u.Admin, CreatedAt: u.CreatedAt}
}

func toSession(s *ent.Session) *model.Session {
	m := &model.Session{
		ID:          s.ID,
		Name:        s.Name,
		Status:      model.SessionStatus(s.Status),
		Jid:         s.Jid,
		PushName:    s.PushName,
		CreatedAt:   s.CreatedAt,
		ConnectedAt: s.ConnectedAt,
	}
	return m
}

func toWebhook(w *ent.Webhook) *model.Webhook {
	m := &model.Webhook{
		ID:          w.ID,
		URL:         w.URL,
		DisplayName: w.DisplayName,
		Enabled:     w.Enabled,
		Events:      make([]model.EventKind, 0, len(w.Events)),
		Headers:     []*model.Header{},
		CreatedAt:   w.CreatedAt,
		UpdatedAt:   w.UpdatedAt,
		SessionID:   w.SessionID,
	}
	for _, k := range w.Events {
		m.Events = append(m.Events, model.EventKind(events.Kind(k).Enum()))
	}
	for _, h := range webhook.HeaderList(w) {
		m.Headers = append(m.Headers, &model.Header{Name: h.Name, Value: h.Value})
	}
	return m
}

// webhookSpec translates the GraphQL input into the registry's terms.
func webhookSpec(in model.WebhookInput) (webhook.Spec, error) {
	s := webhook.Spec{URL: in.URL, DisplayName: in.DisplayName, Enabled: in.Enabled}
	if in.Events != nil {
		ks := make([]events.Kind, 0, len(in.Events))
		for _, e := range in.Events {
			k, ok := events.FromEnum(string(e))
			if !ok || !k.IsSelectable() {
				return s, fault.InvalidField("events", "%s cannot be selected in a webhook's events", e)
			}
			ks = append(ks, k)
		}
		s.Events = &ks
	}
	if in.Headers != nil {
		hs := make([]webhook.Header, 0, len(in.Headers))
		for _, h := range in.Headers {
			hs = append(hs, webhook.Header{Name: h.Name, Value: h.Value})
		}
		s.Headers = &hs
	}
	return s, nil
}
