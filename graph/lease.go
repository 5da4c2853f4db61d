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

// ownerOf is Session.owner: for an admin, the node id of the process
// running the session (the holder of its lease in a cluster, none while
// nobody holds it; this process on SQLite); null for other callers.
func (r *Resolver) ownerOf(ctx context.Context, sessionID string) (*string, error) {
	p, err := auth.Require(ctx)
	if err != nil || p.RequireAdmin("read a session's owner") != nil {
		return nil, nil
	}
	if r.Leases == nil {
		return optional(r.NodeID), nil
	}
	h, err := r.Leases.HolderOf(ctx, sessionID)
	if errors.Is(err, cluster.ErrNoHolder) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &h.Node, nil
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
