package media

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/fault"
)

// Pool bounds how many runs of one kind of media work happen at once.
// Decoding an image, running ffmpeg or holding a downloaded attachment each
// costs tens to hundreds of MiB while it lasts: without a bound, six sends
// of one small PNG that decodes to 512 MiB took a process to 3.4 GB. A run
// past the bound waits for a slot, up to the pool's queue wait or the end
// of its context, then is refused with RATE_LIMITED: a client can try
// again, a process out of memory serves nobody.
//
// The slots are shared fairly between users (internal/fairpool, the user
// from the request's context): a slot given back goes to the waiting user
// holding the fewest, so one user's flood of stickers keeps another's
// image waiting for the runs in progress, not for the whole flood.
//
// A nil *Pool bounds nothing (a Preparer built in a test of another
// package, for instance).
type Pool struct {
	slots *fairpool.Pool
	wait  time.Duration
	busy  string // the refusal's message
}

// NewPool returns a pool of size slots (at least 1) whose waiters give up
// after wait (at most; their context may end sooner). busy is the message
// of a refusal, such as "too many images being prepared at once".
func NewPool(size int, wait time.Duration, busy string) *Pool {
	return &Pool{slots: fairpool.New(size), wait: wait, busy: busy}
}

// Size is the number of slots.
func (p *Pool) Size() int {
	if p == nil {
		return 0
	}
	return p.slots.Size()
}

// errQueueWait is the cause of a wait that lasted the pool's queue wait.
var errQueueWait = errors.New("the queue wait passed")

// Acquire takes a slot and returns the function that gives it back (call
// it when the work's memory is no longer held; later calls do nothing).
// While every slot is taken it waits its user's turn until a slot is given
// to it, the queue wait passes or ctx ends: then the answer is a
// RATE_LIMITED fault (or, when ctx was cancelled, ctx's error: nobody is
// waiting for the answer).
func (p *Pool) Acquire(ctx context.Context) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	wait, cancel := context.WithTimeoutCause(ctx, p.wait, errQueueWait)
	defer cancel()
	lease, err := p.slots.Acquire(wait)
	switch {
	case err == nil:
		return lease.Release, nil
	case errors.Is(err, errQueueWait):
		return nil, fault.New(fault.RateLimited, "%s; try again in a moment", p.busy)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// the request's own deadline is its queue wait: RATE_LIMITED too
		return nil, fault.Wrap(context.Cause(ctx), fault.RateLimited, "%s; try again in a moment", p.busy)
	}
	return nil, fmt.Errorf("waiting for a media slot: %w", err)
}
