package graph

import (
	"context"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/whatsapp"
)

// WhatsApp runs the operations on sessions (whatsapp.Op's Do) where each
// session runs, and reads a session's live state: the manager, or a
// cluster's router.
type WhatsApp interface {
	whatsapp.Runner
	Status(ctx context.Context, sessionID string) (whatsapp.SessionState, error)
}

// sessionOf is a session as GraphQL shows it: the stored record with the
// manager's live state over it.
func (r *Resolver) sessionOf(ctx context.Context, s *ent.Session) (*model.Session, error) {
	st, err := r.WhatsApp.Status(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	return toLiveSession(s, st), nil
}

func toLiveSession(s *ent.Session, st whatsapp.SessionState) *model.Session {
	m := toSession(s)
	m.Status, m.StatusReason = model.SessionStatus(st.Status), optional(st.Reason)
	m.Jid, m.Phone, m.PushName = optional(st.JID), optional(st.Phone), optional(st.PushName)
	m.QRCode, m.QRImage, m.PairingCode = optional(st.QRCode), optional(st.QRImage), optional(st.PairingCode)
	if !st.ConnectedAt.IsZero() {
		t := st.ConnectedAt.UTC()
		m.ConnectedAt = &t
	}
	return m
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
