// Package cluster lets several wagraph processes share one PostgreSQL
// database (operations.md, "Storage and several processes"). Each session
// is run by exactly one process at a time, the holder of its lease: a row
// with the holder, an expiry on the database's clock and a fencing number
// that grows with every new holder. A Node renews its leases every third of
// the TTL, spreads the sessions evenly over the live processes, takes over
// those of a process that died once their leases expire, and gives its
// own back when it stops. A Router answers the WhatsApp operations of any
// session: here when this process holds it, otherwise by forwarding the
// call to the holder (signed with the holder's key), reading the stored
// record when nobody runs the session.
//
// Why leases and not a lock held by a connection: a second connection of
// a WhatsApp device kicks the first (StreamReplaced), so a session must
// never run twice, and a process that loses the database must stop its
// sessions by itself before anybody else may start them: it knows when its
// lease ends, and disconnects before that (dropDeadline).
package cluster

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// Local is the session manager of this process, as the leases drive it.
type Local interface {
	// Adopt starts a session this process has come to hold, unless still
	// reports false by then.
	Adopt(ctx context.Context, sessionID string, still func() bool) error
	AdoptEach(ctx context.Context, sessionIDs []string, still func(id string) bool, done func(i int, err error))
	// Release stops a session another process holds now, reporting nothing.
	Release(sessionID string)
	State(sessionID string) whatsapp.SessionState
}

// DefaultTTL is the lease TTL when none is set (--lease-ttl's default).
const DefaultTTL = 15 * time.Second

// Options are what a Node needs.
type Options struct {
	// ID is this process's name in the cluster (--node-id); "" is a
	// random one.
	ID     string
	DB     *sql.DB // the PostgreSQL database of the cluster
	Logger *slog.Logger
	// Advertise is the host:port the other processes reach this one at.
	Advertise string
	// TTL is how long a lease holds unrenewed.
	TTL time.Duration
}

// Node is this process as a member of the cluster: its leases and its
// share of the sessions. Run keeps them; Leave gives them back.
type Node struct {
	id     string
	addr   string
	secret []byte
	ttl    time.Duration
	db     *sql.DB
	local  Local
	log    *slog.Logger

	wake  chan struct{}
	ready chan struct{} // closed once the first share taken has been started
	once  sync.Once
	// shared is set by the first tick that reached its adoption (under
	// leaseMu): that tick's adoption alone closes ready. A later tick
	// that takes nothing new must not, while the first one's sessions are
	// still being started.
	shared bool

	// leaseMu serialises what changes the leases: a tick (renewal to
	// rebalance) and a Claim. A lease claimed while a renewal was under
	// way would be missing from what the renewal returned, and taken for
	// lost.
	leaseMu sync.Mutex

	mu     sync.Mutex
	held   map[string]int64 // session → fence of the lease this process holds
	lastOK time.Time        // when the last successful renewal began (local clock)
	joined bool             // Join registered this process (its id is this process's)
	left   bool

	adopting sync.WaitGroup // AdoptEach runs the ticks started
}

// New returns this process as a cluster member that has not joined yet:
// the session manager is built with it (its FencedStatuses), then Join.
func New(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("cluster: node key: %w", err)
	}
	if opts.ID == "" {
		opts.ID = uuid.NewString()
	}
	n := &Node{
		id: opts.ID, addr: opts.Advertise, secret: secret, ttl: opts.TTL, db: opts.DB,
		held: map[string]int64{}, wake: make(chan struct{}, 1), ready: make(chan struct{}),
	}
	n.log = opts.Logger.With("node", n.id)
	return n, nil
}

// Join registers this process in the cluster, running its sessions on
// local, and returns holding none yet: Run takes its share. While another
// live process has this node id (a process restarted before its previous
// self's row expired, or two processes given one --node-id), it waits for
// that row to expire, at most ctx's time: taking over a live process's
// identity would take its leases too.
func (n *Node) Join(ctx context.Context, local Local) error {
	n.local = local
	logged := false
	for {
		start := time.Now()
		took, err := n.register(ctx)
		if err != nil {
			return err
		}
		if took {
			n.mu.Lock()
			n.lastOK, n.joined = start, true
			n.mu.Unlock()
			n.log.Info("joined the cluster", "advertise_addr", n.addr, "lease_ttl", n.ttl)
			return nil
		}
		if !logged {
			n.log.Warn("another live process has this node id: waiting for its row to expire (--node-id names each process of a cluster; a restart waits at most --lease-ttl)", "lease_ttl", n.ttl)
			logged = true
		}
		t := time.NewTimer(n.ttl / 3)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("cluster: join as %s: another live process has this node id: %w", n.id, ctx.Err())
		case <-t.C:
		}
	}
}

// Ready is closed once Run has renewed and taken its first share (the
// sessions taken are starting).
func (n *Node) Ready() <-chan struct{} { return n.ready }

// HeldIDs lists the sessions this process holds.
func (n *Node) HeldIDs() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]string, 0, len(n.held))
	for id := range n.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ID is this process's id in the cluster.
func (n *Node) ID() string { return n.id }

// Holds reports whether this process holds the session's lease (as far as
// it knows: a lease it lost is found at the next renewal).
func (n *Node) Holds(sessionID string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.held[sessionID]
	return ok
}

// fence returns the fencing number of the session's lease, if held.
func (n *Node) fence(sessionID string) (int64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f, ok := n.held[sessionID]
	return f, ok
}

// Held is how many sessions this process holds.
func (n *Node) Held() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.held)
}

// Run keeps the leases until ctx ends: every third of the TTL it renews
// them, lets go of those it lost, and takes or gives sessions so that each
// live process holds its share. When renewing fails it tries again every
// second, and past dropDeadline it stops every session it runs: the leases
// may expire before it can renew them, and another process may then start
// them. It returns when ctx ends and the adoptions it started have ended.
func (n *Node) Run(ctx context.Context) {
	defer n.adopting.Wait()
	for {
		wait := n.ttl / 3
		if err := n.tick(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			n.mu.Lock()
			since := time.Since(n.lastOK)
			n.mu.Unlock()
			n.log.Warn("renewing the session leases failed", "since_last_renewal", since.Round(time.Millisecond), "err", err)
			// A statement cut at the deadline ends a hair before it.
			if since+n.ttl/50 >= n.dropDeadline() {
				n.dropAll("the leases could not be renewed before they expire")
			}
			wait = min(time.Second, n.ttl/6)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-n.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// dropDeadline is how long after the last renewal began a process that
// cannot renew stops its sessions: a quarter of the TTL before the leases
// can expire, time enough to close the connections.
func (n *Node) dropDeadline() time.Duration { return n.ttl * 3 / 4 }

// Wake makes Run renew and rebalance now rather than at its next tick.
func (n *Node) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// tick is one renewal and rebalance.
func (n *Node) tick(ctx context.Context) error {
	n.leaseMu.Lock()
	defer n.leaseMu.Unlock()
	start := time.Now()
	n.mu.Lock()
	// A renewal stuck past the drop must not hold the loop. Holding
	// nothing (at the first tick, or after a drop), nothing is at stake:
	// the renewal gets a third of the TTL, or it could never succeed
	// again once the drop deadline has passed.
	deadline := n.lastOK.Add(n.dropDeadline())
	if len(n.held) == 0 {
		deadline = start.Add(n.ttl / 3)
	}
	n.mu.Unlock()
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	renewed, err := n.renew(rctx)
	if err != nil {
		return err
	}
	lost, found := n.reconcile(renewed, start)
	for _, id := range lost {
		n.log.Warn("lost the lease of a session: another process holds it", "session_id", id)
		n.local.Release(id)
	}
	// The rest of the tick is bounded as the renewal was, from this one: a
	// statement stuck after a renewal must not hold the loop past the drop
	// either. The adoptions keep ctx: they outlive the tick.
	dctx, dcancel := context.WithDeadline(ctx, start.Add(n.dropDeadline()))
	defer dcancel()
	live, total, err := n.counts(dctx)
	if err != nil {
		return err
	}
	share := (total + live - 1) / max(live, 1)
	mine := n.Held()
	switch {
	case mine > share:
		n.giveBack(dctx, n.extra(mine-share))
	case mine < share:
		got, err := n.acquire(dctx, "", share-mine)
		if err != nil {
			return err
		}
		found = append(found, n.take(got)...)
	}
	started := func() {}
	if !n.shared {
		n.shared = true
		started = func() { n.once.Do(func() { close(n.ready) }) }
	}
	n.adopt(ctx, found, started)
	return nil
}

// reconcile makes held the leases renewed (session → fence): it returns
// the sessions this process held and lost, and those it holds without
// running them (it dropped them when the database was out of reach, and
// renewed them before they expired).
func (n *Node) reconcile(renewed map[string]int64, start time.Time) (lost, found []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lastOK = start
	for id := range n.held {
		if _, ok := renewed[id]; !ok {
			lost = append(lost, id)
		}
	}
	for id := range renewed {
		if _, ok := n.held[id]; !ok {
			found = append(found, id)
		}
	}
	n.held = maps.Clone(renewed) // Claim adds to it under n.mu; renewed stays the caller's
	return lost, found
}

// take records leases just acquired and returns their sessions.
func (n *Node) take(got map[string]int64) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]string, 0, len(got))
	for id, f := range got {
		n.held[id] = f
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// adopt starts the sessions just taken, in the background (a tick must
// not wait for logins), then calls started. Each is asked again whether
// it is still held.
func (n *Node) adopt(ctx context.Context, ids []string, started func()) {
	if len(ids) == 0 {
		started()
		return
	}
	n.log.Info("took sessions", "sessions", len(ids), "held", n.Held())
	n.adopting.Go(func() {
		defer started()
		n.local.AdoptEach(ctx, ids, n.Holds, func(i int, err error) {
			if fault.CodeOf(err) == fault.NotFound && ctx.Err() == nil {
				n.log.Warn("a session taken was gone when it was to be started", "session_id", ids[i], "err", err)
				return
			}
			if err != nil && ctx.Err() == nil {
				n.log.Error("restoring the session failed", "session_id", ids[i], "err", err)
			}
		})
	})
}

// extra picks k sessions to give to the others: never one that is pairing
// (a person is scanning its QR code) or logging in.
func (n *Node) extra(k int) []string {
	n.mu.Lock()
	ids := make([]string, 0, len(n.held))
	for id := range n.held {
		ids = append(ids, id)
	}
	n.mu.Unlock()
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		if len(out) == k {
			break
		}
		switch n.local.State(id).Status {
		case whatsapp.StatusPairing, whatsapp.StatusConnecting:
			continue
		}
		out = append(out, id)
	}
	return out
}

// giveBack stops the sessions and then lets go of their leases, in that
// order: the next holder may connect as soon as the lease is free.
func (n *Node) giveBack(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	for _, id := range ids {
		n.mu.Lock()
		fence, ok := n.held[id]
		delete(n.held, id)
		n.mu.Unlock()
		if !ok {
			continue
		}
		n.local.Release(id)
		if err := n.release(ctx, id, fence); err != nil {
			n.log.Warn("giving a lease back failed: it expires by itself", "session_id", id, "err", err)
		}
	}
	n.log.Info("gave sessions to the other processes", "sessions", len(ids), "held", n.Held())
}

// dropAll stops every session this process runs, keeping nothing: the
// leases could not be renewed.
func (n *Node) dropAll(why string) {
	n.mu.Lock()
	ids := make([]string, 0, len(n.held))
	for id := range n.held {
		ids = append(ids, id)
	}
	n.held = map[string]int64{}
	n.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	n.log.Error("stopping every session this process runs", "sessions", len(ids), "reason", why)
	for _, id := range ids {
		n.local.Release(id)
	}
}

// Claim takes the lease of a session nobody holds and starts it here,
// for an operation on it that cannot wait for the next rebalance. It
// reports false when another process holds it (or the session does not
// exist).
func (n *Node) Claim(ctx context.Context, sessionID string) (bool, error) {
	n.leaseMu.Lock()
	// The claim holds the ticks back: bounded, so that a tick can still
	// renew, or drop the sessions, before the leases expire when the
	// database stops answering.
	n.mu.Lock()
	deadline := n.lastOK.Add(n.dropDeadline())
	n.mu.Unlock()
	cctx, cancel := context.WithDeadline(ctx, later(deadline, time.Now().Add(n.ttl/8)))
	got, err := n.acquire(cctx, sessionID, 1)
	cancel()
	if err != nil || len(got) == 0 {
		n.leaseMu.Unlock()
		if err != nil && ctx.Err() == nil {
			n.log.Error("taking the lease of a session failed", "session_id", sessionID, "err", err)
		}
		return false, err
	}
	n.take(got)
	n.leaseMu.Unlock()
	if err := n.local.Adopt(ctx, sessionID, func() bool { return n.Holds(sessionID) }); err != nil {
		n.log.Error("restoring the session failed", "session_id", sessionID, "err", err)
		return true, err
	}
	return true, nil
}

// Leave gives every lease back and removes this process from the cluster.
// Call it once the sessions are stopped (the manager closed): the others
// take them at once rather than after the TTL.
func (n *Node) Leave(ctx context.Context) error {
	n.leaseMu.Lock()
	defer n.leaseMu.Unlock()
	n.mu.Lock()
	if n.left || !n.joined { // not joined: the id may be another live process's
		n.mu.Unlock()
		return nil
	}
	n.left = true
	n.held = map[string]int64{}
	n.mu.Unlock()
	err := n.leave(ctx)
	if err != nil {
		return fmt.Errorf("cluster: leave: %w", err)
	}
	n.log.Info("left the cluster")
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ErrNoHolder says no live process holds a session's lease.
var ErrNoHolder = errors.New("cluster: nobody holds the session")
