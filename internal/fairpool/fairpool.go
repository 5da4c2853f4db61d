// Package fairpool shares a fixed number of slots between tenants, the API
// users on whose behalf heavy work runs (image decodes, ffmpeg runs,
// downloads, link previews).
//
// A free slot goes to whoever asks. While every slot is taken, each slot
// given back goes to the waiting tenant that holds the fewest, among equals
// the one served longest ago: round robin across tenants, first come first
// served within one. So one tenant's flood of slow work keeps another
// waiting for one run at most, never for the flood's whole queue (first
// come, first served, one user's stickers kept another's one-pixel image
// waiting 19.9 s).
//
// Work that is a courtesy and watches its context (a link preview) asks
// with TryAcquire: it never queues behind others, but when every slot is
// taken and some tenant holds more than its share (the slots divided by the
// tenants holding or asking), that tenant's newest run is cancelled and its
// slot handed to the asker. A tenant holds at most its share while others
// wait.
//
// The tenant is carried by the context (WithTenant): internal/auth puts
// the caller's user there with its principal. Work without one counts as
// the tenant "".
package fairpool

import (
	"context"
	"errors"
	"sync"
)

type tenantKey struct{}

// WithTenant returns ctx carrying the tenant whose work runs under it.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// Tenant is the tenant ctx carries, "" when none.
func Tenant(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

var (
	// ErrBusy says TryAcquire found every slot taken by tenants within
	// their share (the asker's own included).
	ErrBusy = errors.New("every slot is taken")
	// ErrReclaimed is the cause with which a lease's context ends when its
	// slot was taken back for a tenant holding less than its share.
	ErrReclaimed = errors.New("the slot was taken back for another user's work")
)

// Pool is a fixed number of slots shared fairly between tenants. It is
// safe for concurrent use.
type Pool struct {
	size int

	mu      sync.Mutex
	inUse   int
	turn    uint64 // counts tenants' arrivals and grants: the round robin's order
	tenants map[string]*tenant
}

// tenant is what one tenant holds and asks for; it is dropped once it
// does neither.
type tenant struct {
	held    int
	leaving int       // of held, leases cancelled to give their slot back
	waiting []*waiter // first come, first served
	leases  []*Lease  // held, oldest first
	served  uint64    // the turn of its last grant, 0 before the first
	arrived uint64    // the turn it came: newcomers in their order
}

type waiter struct {
	ctx     context.Context
	granted chan *Lease // buffered: a grant never blocks the pool
}

// New returns a pool of size slots (at least 1).
func New(size int) *Pool {
	return &Pool{size: max(size, 1), tenants: map[string]*tenant{}}
}

// Size is the number of slots.
func (p *Pool) Size() int { return p.size }

// Waiting is the number of asks waiting for a slot.
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, t := range p.tenants {
		n += len(t.waiting)
	}
	return n
}

// Acquire takes a slot for ctx's tenant, waiting its turn while every slot
// is taken, until ctx ends (then context.Cause(ctx)).
func (p *Pool) Acquire(ctx context.Context) (*Lease, error) {
	return p.acquire(ctx, false)
}

// TryAcquire takes a free slot for ctx's tenant, or, when every slot is
// taken, cancels the newest run of the tenant most over its share and waits
// (until ctx ends) for that slot. When the asker already holds its share,
// or nobody holds more than theirs, it answers ErrBusy at once.
func (p *Pool) TryAcquire(ctx context.Context) (*Lease, error) {
	return p.acquire(ctx, true)
}

func (p *Pool) acquire(ctx context.Context, try bool) (*Lease, error) {
	name := Tenant(ctx)
	w := &waiter{ctx: ctx, granted: make(chan *Lease, 1)}
	p.mu.Lock()
	t := p.tenants[name]
	if t == nil {
		p.turn++
		t = &tenant{arrived: p.turn}
		p.tenants[name] = t
	}
	t.waiting = append(t.waiting, w)
	p.dispatch()
	select {
	case l := <-w.granted:
		p.mu.Unlock()
		return l, nil
	default:
	}
	if try && !p.reclaimFor(name) {
		p.leave(name, w)
		p.mu.Unlock()
		return nil, ErrBusy
	}
	p.mu.Unlock()

	select {
	case l := <-w.granted:
		return l, nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	select {
	case l := <-w.granted: // granted as ctx ended: give it on
		p.mu.Unlock()
		l.Release()
	default:
		p.leave(name, w)
		p.mu.Unlock()
	}
	return nil, context.Cause(ctx)
}

// dispatch hands the free slots to the waiting tenants: the one holding
// the fewest, then the one served longest ago (a newcomer, never served,
// first: a user's one send waits for the runs in progress, not for a
// flooder's next), then the earliest come. p.mu is held.
func (p *Pool) dispatch() {
	for p.inUse < p.size {
		var next *tenant
		var name string
		for n, t := range p.tenants { // turns are unique: so is the choice
			if len(t.waiting) == 0 {
				continue
			}
			if next == nil || before(t, next) {
				next, name = t, n
			}
		}
		if next == nil {
			return
		}
		w := next.waiting[0]
		next.waiting = next.waiting[1:]
		p.turn++
		p.inUse++
		next.held++
		next.served = p.turn
		ctx, cancel := context.WithCancelCause(w.ctx)
		l := &Lease{pool: p, tenant: name, ctx: ctx, cancel: cancel}
		next.leases = append(next.leases, l)
		w.granted <- l
	}
}

// before orders the waiting tenants: a before b when a is served first.
func before(a, b *tenant) bool {
	switch {
	case a.held != b.held:
		return a.held < b.held
	case a.served != b.served:
		return a.served < b.served
	}
	return a.arrived < b.arrived
}

// reclaimFor cancels, for tenant name, the newest lease of the tenant most
// over its share; false when name holds its share already or nobody is
// over theirs. p.mu is held.
func (p *Pool) reclaimFor(name string) bool {
	active := 0
	for _, t := range p.tenants {
		if t.held-t.leaving > 0 || len(t.waiting) > 0 {
			active++
		}
	}
	share := max(1, p.size/max(active, 1))
	if p.tenants[name].held >= share {
		return false
	}
	var victim *tenant
	for n, t := range p.tenants {
		if n != name && t.held-t.leaving > share && (victim == nil || t.held-t.leaving > victim.held-victim.leaving) {
			victim = t
		}
	}
	if victim == nil {
		return false
	}
	for i := len(victim.leases) - 1; i >= 0; i-- {
		if l := victim.leases[i]; !l.reclaimed {
			l.reclaimed = true
			victim.leaving++
			l.cancel(ErrReclaimed)
			return true
		}
	}
	return false
}

// leave takes w out of tenant name's queue. p.mu is held.
func (p *Pool) leave(name string, w *waiter) {
	t := p.tenants[name]
	for i, x := range t.waiting {
		if x == w {
			t.waiting = append(t.waiting[:i:i], t.waiting[i+1:]...)
			break
		}
	}
	p.forget(name, t)
}

// forget drops a tenant that holds and asks for nothing. p.mu is held.
func (p *Pool) forget(name string, t *tenant) {
	if t.held == 0 && len(t.waiting) == 0 {
		delete(p.tenants, name)
	}
}

// Lease is one slot taken. Release gives it back.
type Lease struct {
	pool   *Pool
	tenant string
	ctx    context.Context
	cancel context.CancelCauseFunc
	once   sync.Once

	reclaimed bool // under pool.mu
}

// Context is the context the slot was asked with, ended with cause
// ErrReclaimed when the pool takes the slot back (TryAcquire's), and at
// Release.
func (l *Lease) Context() context.Context { return l.ctx }

// Release gives the slot back to the next waiting tenant; later calls do
// nothing, so that a slot another run holds is never given away twice.
func (l *Lease) Release() {
	l.once.Do(func() {
		p := l.pool
		p.mu.Lock()
		t := p.tenants[l.tenant]
		t.held--
		if l.reclaimed {
			t.leaving--
		}
		for i, x := range t.leases {
			if x == l {
				t.leases = append(t.leases[:i:i], t.leases[i+1:]...)
				break
			}
		}
		p.inUse--
		p.dispatch()
		p.forget(l.tenant, t)
		p.mu.Unlock()
		l.cancel(context.Canceled)
	})
}
