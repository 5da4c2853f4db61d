package media

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
// A nil *Pool bounds nothing (a Preparer built in a test of another
// package, for instance).
type Pool struct {
	slots chan struct{}
	wait  time.Duration
	busy  string // the refusal's message
}

// NewPool returns a pool of size slots (at least 1) whose waiters give up
// after wait (at most; their context may end sooner). busy is the message
// of a refusal, such as "too many images being prepared at once".
func NewPool(size int, wait time.Duration, busy string) *Pool {
	return &Pool{slots: make(chan struct{}, max(size, 1)), wait: wait, busy: busy}
}

// Size is the number of slots.
func (p *Pool) Size() int {
	if p == nil {
		return 0
	}
	return cap(p.slots)
}

// Acquire takes a slot and returns the function that gives it back (call
// it when the work's memory is no longer held; later calls do nothing). While every
// slot is taken it waits, in no particular order, until one is given back,
// the queue wait passes or ctx ends: then the answer is a RATE_LIMITED
// fault (or, when ctx was cancelled, ctx's error: nobody is waiting for
// the answer).
func (p *Pool) Acquire(ctx context.Context) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	select {
	case p.slots <- struct{}{}:
		return p.releaser(), nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, p.refuse(ctx)
	}
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	select {
	case p.slots <- struct{}{}:
		return p.releaser(), nil
	case <-timer.C:
		return nil, fault.New(fault.RateLimited, "%s; try again in a moment", p.busy)
	case <-ctx.Done():
		return nil, p.refuse(ctx)
	}
}

// releaser gives the slot back once however often it is called: a second
// call must not free a slot another run holds.
func (p *Pool) releaser() func() {
	var once sync.Once
	return func() { once.Do(func() { <-p.slots }) }
}

// refuse is the answer to a waiter whose context ended: a deadline is the
// queue wait of the request, so RATE_LIMITED like the pool's own.
func (p *Pool) refuse(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.Wrap(cause, fault.RateLimited, "%s; try again in a moment", p.busy)
	}
	return fmt.Errorf("waiting for a media slot: %w", cause)
}
