package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// Router is the session manager as the API sees it in a cluster: each
// operation runs where the session runs (a whatsapp.Runner).
type Router struct {
	node     *Node
	m        *whatsapp.Manager
	statuses StatusStore
	call     *caller
	ops      map[string]op
	seen     *seenCache // the nonces of the calls taken, for every handler
	log      *slog.Logger
}

// NewRouter returns the router of node over its manager m; statuses reads
// the stored records of sessions nobody runs. With t, calls to the other
// processes go over TLS (nil: plain HTTP, for a private network).
func NewRouter(node *Node, m *whatsapp.Manager, statuses StatusStore, t *TLS, log *slog.Logger) *Router {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Router{node: node, m: m, statuses: statuses, call: newCaller(node, t), seen: newSeenCache(maxSeen), log: log}
	r.ops = r.table()
	return r
}

// Handler serves the calls the other processes forward here; maxBody
// bounds a call (a send's media travels inside it).
func (r *Router) Handler(maxBody int64) http.Handler {
	return &callServer{node: r.node, ops: r.ops, maxBody: maxBody, seen: r.seen, log: r.log}
}

// none is the argument or result of an operation that has none.
type none = whatsapp.None

// table is every operation this process serves to the others: the
// manager's, each from its one definition (whatsapp.Operations); a delete
// also removes the session's lease.
func (r *Router) table() map[string]op {
	ops := make(map[string]op)
	for _, o := range whatsapp.Operations() {
		ops[o.Name()] = func(ctx context.Context, id string, req json.RawMessage) (any, error) {
			return o.Serve(ctx, r.m, id, req)
		}
	}
	del := ops[whatsapp.OpDelete().Name()]
	ops[whatsapp.OpDelete().Name()] = func(ctx context.Context, id string, req json.RawMessage) (any, error) {
		res, err := del(ctx, id, req)
		r.forget(ctx, id)
		return res, err
	}
	return ops
}

// forget removes the lease of a deleted session.
func (r *Router) forget(ctx context.Context, id string) {
	if err := r.node.forget(context.WithoutCancel(ctx), id); err != nil {
		r.log.Warn("removing the lease of a deleted session failed", "session_id", id, "err", err)
	}
}

// where says who runs the session: this process (local), or h. With claim,
// a session nobody holds is taken here first (an operation on it cannot
// wait for the next rebalance); without, ErrNoHolder says nobody runs it.
func (r *Router) where(ctx context.Context, id string, claim bool) (local bool, h Holder, err error) {
	if r.node.Holds(id) {
		return true, Holder{}, nil
	}
	h, err = r.node.HolderOf(ctx, id)
	switch {
	case err == nil:
		return h.Self, h, nil
	case !errors.Is(err, ErrNoHolder) || !claim:
		return false, Holder{}, err
	}
	took, err := r.node.Claim(ctx, id)
	if err != nil {
		return false, Holder{}, err
	}
	if took {
		return true, Holder{}, nil
	}
	// Another process took it meanwhile, or the session does not exist.
	h, err = r.node.HolderOf(ctx, id)
	if errors.Is(err, ErrNoHolder) {
		return false, Holder{}, fault.New(fault.NotFound, "session %s not found", id)
	}
	return err == nil && h.Self, h, err
}

// Run runs one operation where the session runs: here, or forwarded to
// its holder; a holder that let go of it meanwhile is read again, once. A
// session nobody holds is taken here first.
func (r *Router) Run(ctx context.Context, id string, c whatsapp.Call) error {
	for attempt := 0; ; attempt++ {
		loc, h, err := r.where(ctx, id, true)
		if err != nil {
			return err
		}
		if loc {
			return c.Local(ctx, r.m)
		}
		err = r.call.do(ctx, h, id, c.Op, c.Request, c.Result)
		if !errors.Is(err, errMoved) {
			return err
		}
		if attempt > 0 {
			return fault.New(fault.NotConnected, "session %s is moving to another process: try again in a moment", id)
		}
	}
}

// Status returns the session's state from the process running it; when
// none does (or it does not answer), the stored record says what is known.
func (r *Router) Status(ctx context.Context, id string) (whatsapp.SessionState, error) {
	loc, h, err := r.where(ctx, id, false)
	switch {
	case err == nil && loc:
		return r.m.Status(ctx, id)
	case err == nil:
		var st whatsapp.SessionState
		err = r.call.do(ctx, h, id, whatsapp.OpStatus().Name(), none{}, &st)
		if err == nil || (fault.From(err) != nil && fault.CodeOf(err) != fault.NotConnected) {
			return st, err
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if !errors.Is(err, errMoved) && fault.From(err) == nil {
			r.log.Warn("reading a session's state from its holder failed: answering from the stored record", "session_id", id, "holder", h.Node, "err", err)
		}
	case !errors.Is(err, ErrNoHolder):
		return whatsapp.SessionState{}, err
	}
	rec, found, err := r.statuses.LoadStatus(ctx, id)
	if err != nil {
		return whatsapp.SessionState{}, err
	}
	if !found {
		return whatsapp.SessionState{}, fault.New(fault.NotFound, "session %s not found", id)
	}
	return whatsapp.UnheldState(rec), nil
}

// States returns the state of each of sessions (their records read with
// the list, in one query) without a call to another process: a session
// held here shows this manager's state; one another process runs, the
// record its holder saved (whatsapp.HeldState); one nobody runs, its
// record as a process taking it over would load it (whatsapp.UnheldState).
// Which of them a live process holds is one read of the leases, made only
// when a record says its session was running.
func (r *Router) States(ctx context.Context, sessions []whatsapp.StoredSession) ([]whatsapp.SessionState, error) {
	out, err := r.m.States(ctx, sessions)
	if err != nil {
		return nil, err
	}
	var ask []string
	for _, s := range sessions {
		if !r.node.Holds(s.ID) && s.Record.Status.Running() {
			ask = append(ask, s.ID)
		}
	}
	held, err := r.node.HoldersOf(ctx, ask)
	if err != nil {
		return nil, err
	}
	for i, s := range sessions {
		switch {
		case r.node.Holds(s.ID) || held[s.ID] == r.node.ID(): // this manager's state
		case held[s.ID] != "":
			out[i] = whatsapp.HeldState(s.Record)
		default:
			out[i] = whatsapp.UnheldState(s.Record)
		}
	}
	return out, nil
}

// Delete forgets a deleted session where it runs, which unlinks its device
// and removes its lease. Its record is gone already, so nobody may take it:
// a session nobody runs is forgotten here.
func (r *Router) Delete(ctx context.Context, id string) error {
	loc, h, err := r.where(ctx, id, false)
	switch {
	case err == nil && !loc:
		err = r.call.do(ctx, h, id, whatsapp.OpDelete().Name(), none{}, nil)
		if !errors.Is(err, errMoved) && fault.CodeOf(err) != fault.NotConnected {
			return err
		}
		r.log.Warn("the process running a deleted session did not forget it: forgetting it here", "session_id", id, "err", err)
	case err != nil && !errors.Is(err, ErrNoHolder):
		return err
	}
	err = r.m.Delete(ctx, id)
	r.forget(ctx, id)
	return err
}
