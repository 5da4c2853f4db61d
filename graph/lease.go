package graph

import (
	"context"
	"errors"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
)

// Leases tells which process of a cluster holds a session
// (cluster.ErrNoHolder when none does).
type Leases interface {
	HolderOf(ctx context.Context, sessionID string) (cluster.Holder, error)
}

// leaseOf is Session.lease: for an admin, on PostgreSQL, while a process
// holds the session; null otherwise (a field an admin asks for on behalf
// of the people who operate the cluster, never an error for others).
func (r *Resolver) leaseOf(ctx context.Context, sessionID string) (*model.SessionLease, error) {
	p, err := auth.Require(ctx)
	if err != nil || p.RequireAdmin("read a session's lease") != nil || r.Leases == nil {
		return nil, nil
	}
	h, err := r.Leases.HolderOf(ctx, sessionID)
	if errors.Is(err, cluster.ErrNoHolder) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &model.SessionLease{Node: h.Node, Address: h.Addr, Fence: int(h.Fence), ExpiresAt: h.ExpiresAt}, nil
}
