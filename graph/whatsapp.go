package graph

import (
	"context"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// Linker is the session manager's part that links and connects sessions.
type Linker interface {
	Status(ctx context.Context, sessionID string) (whatsapp.SessionState, error)
	Connect(ctx context.Context, sessionID string) error
	PairPhone(ctx context.Context, sessionID, number string) (string, error)
	Disconnect(sessionID string) error
	Logout(ctx context.Context, sessionID string) error
	Delete(ctx context.Context, sessionID string) error
}

// GroupAdmin is the session manager's part that manages groups.
type GroupAdmin interface {
	CreateGroup(ctx context.Context, sessionID, name, description string, participants []whatsapp.JID) (whatsapp.Group, error)
	Groups(ctx context.Context, sessionID string) ([]whatsapp.Group, error)
	UpdateGroup(ctx context.Context, sessionID string, jid whatsapp.JID, u whatsapp.GroupUpdate) (whatsapp.Group, error)
	GroupInviteLink(ctx context.Context, sessionID string, jid whatsapp.JID) (string, error)
	DemoteParticipants(ctx context.Context, sessionID string, jid whatsapp.JID, participants []whatsapp.JID) ([]whatsapp.ParticipantOutcome, error)
}

// AccountAdmin is the session manager's part that manages the linked
// account's profile and privacy.
type AccountAdmin interface {
	SetPicture(ctx context.Context, sessionID string, target whatsapp.JID, jpeg []byte) error
	SetProfileName(ctx context.Context, sessionID, name string) error
	Privacy(ctx context.Context, sessionID string) (whatsapp.Privacy, error)
	SetPrivacy(ctx context.Context, sessionID, setting, value string) (whatsapp.Privacy, error)
	SetDefaultDisappearingTimer(ctx context.Context, sessionID string, d time.Duration) error
}

// sessionOf is a session as GraphQL shows it: the stored record with the
// manager's live state over it.
func (r *Resolver) sessionOf(ctx context.Context, s *ent.Session) (*model.Session, error) {
	st, err := r.Link.Status(ctx, s.ID)
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

// connectedAccount returns the linked account's JID (phone@s.whatsapp.net)
// of a session that has one.
func (r *Resolver) connectedAccount(ctx context.Context, sessionID string) (whatsapp.SessionState, whatsapp.JID, error) {
	st, err := r.Link.Status(ctx, sessionID)
	if err != nil {
		return st, whatsapp.JID{}, err
	}
	if st.Phone == "" {
		return st, whatsapp.JID{}, fault.New(fault.NotConnected, "session %s is not linked to an account (status: %s)", sessionID, st.Status)
	}
	jid, err := whatsapp.ParseRecipient("phone", st.Phone)
	return st, jid, err
}
