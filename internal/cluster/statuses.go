package cluster

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent/predicate"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/whatsapp"
)

// StatusStore is where the session table keeps status records.
type StatusStore interface {
	LoadStatus(ctx context.Context, sessionID string) (whatsapp.StatusRecord, bool, error)
	SaveStatusIf(ctx context.Context, sessionID string, rec whatsapp.StatusRecord, cond ...predicate.Session) (bool, error)
}

// FencedStatuses is the session manager's StatusStore in a cluster: a
// status is saved only while this process holds the session's lease with
// the fencing number it took, checked in the same statement. A process
// that lost a session (the database was out of reach, its lease expired,
// another process took it) and reports it DISCONNECTED late cannot
// overwrite what the new holder saved.
type FencedStatuses struct {
	store StatusStore
	node  *Node
}

// NewFencedStatuses returns the fenced store over store for n.
func NewFencedStatuses(store StatusStore, n *Node) *FencedStatuses {
	return &FencedStatuses{store: store, node: n}
}

// LoadStatus reads the record as it is.
func (f *FencedStatuses) LoadStatus(ctx context.Context, sessionID string) (whatsapp.StatusRecord, bool, error) {
	return f.store.LoadStatus(ctx, sessionID)
}

// SaveStatus writes the record under this process's lease.
func (f *FencedStatuses) SaveStatus(ctx context.Context, sessionID string, rec whatsapp.StatusRecord) error {
	fence, ok := f.node.fence(sessionID)
	if !ok {
		return fmt.Errorf("save status of session %s: this process does not hold its lease", sessionID)
	}
	saved, err := f.store.SaveStatusIf(ctx, sessionID, rec, heldWith(f.node.id, fence))
	if err != nil {
		return err
	}
	if !saved {
		return fmt.Errorf("save status of session %s: its lease (fence %d) is no longer this process's, or the session is gone", sessionID, fence)
	}
	return nil
}

// heldWith holds for a session whose lease node holds with fence.
func heldWith(node string, fence int64) predicate.Session {
	return func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString("EXISTS (SELECT 1 FROM session_leases WHERE session_leases.session_id = ").
				WriteString(s.C(entsession.FieldID)).
				WriteString(" AND session_leases.holder = ").Arg(node).
				WriteString(" AND session_leases.fence = ").Arg(fence).
				WriteString(")")
		}))
	}
}
