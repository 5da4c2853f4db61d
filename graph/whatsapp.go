package graph

import (
	"context"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/whatsapp"
)

// WhatsApp runs the operations on sessions (whatsapp.Op's Do) where each
// session runs, and reads a session's live state (Status: from the process
// running it) or the states of a list of sessions from their records
// (States: no call to another process): the manager, or a cluster's
// router.
type WhatsApp interface {
	whatsapp.Runner
	Status(ctx context.Context, sessionID string) (whatsapp.SessionState, error)
	States(ctx context.Context, sessions []whatsapp.StoredSession) ([]whatsapp.SessionState, error)
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

// sessionsOf is a list of sessions as GraphQL shows it: the records read
// with the list, each with the state its process shows, in one more read at
// most (a cluster's leases) and no call to another process.
func (r *Resolver) sessionsOf(ctx context.Context, ss []*ent.Session) ([]*model.Session, error) {
	states, err := r.WhatsApp.States(ctx, sessions.Stored(ss))
	if err != nil {
		return nil, err
	}
	out := make([]*model.Session, len(ss))
	for i, s := range ss {
		out[i] = toLiveSession(s, states[i])
	}
	return out, nil
}

func toLiveSession(s *ent.Session, st whatsapp.SessionState) *model.Session {
	m := toSession(s)
	m.Status, m.StatusReason = model.SessionStatus(st.Status), optional(st.Reason)
	m.Jid, m.Phone, m.PushName = optional(st.JID), optional(st.Phone), optional(st.PushName)
	m.QRCode, m.QRImage, m.PairingCode = optional(st.QRCode), optional(st.QRImage), optional(st.PairingCode)
	m.Passkey = toPasskeyStep(st.Passkey)
	if !st.ConnectedAt.IsZero() {
		t := st.ConnectedAt.UTC()
		m.ConnectedAt = &t
	}
	return m
}

// toPasskeyStep is the passkey step of a pairing session; nil when none.
func toPasskeyStep(p whatsapp.PasskeyStep) *model.PasskeyStep {
	if p.Status == "" {
		return nil
	}
	return &model.PasskeyStep{Status: model.PasskeyStatus(p.Status), PublicKey: model.JSON(p.PublicKey), Code: optional(p.Code), ExpiresAt: p.ExpiresAt.UTC()}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// toLimits is what WhatsApp said of a session's limits as GraphQL shows
// it: null fields for what it did not say.
func toLimits(l whatsapp.Limits) *model.SessionLimits {
	out := &model.SessionLimits{}
	if !l.ReachoutTimelockUntil.IsZero() {
		t := l.ReachoutTimelockUntil.UTC()
		out.ReachoutTimelockUntil = &t
	}
	return out
}
