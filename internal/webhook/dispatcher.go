package webhook

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
)

// Defaults of a Dispatcher.
const (
	DefaultConcurrency  = 32
	DefaultPerWebhook   = 4
	DefaultPollInterval = time.Second
	// leaseMargin is added to the attempt timeout to make the claim's
	// lease: the attempt has ended (the Sender bounds it) and its result
	// is being recorded well before another claimer may take the row.
	leaseMargin = 30 * time.Second
)

// Outcomes of an attempt, as the Observer is told them.
const (
	OutcomeDelivered = "delivered" // 2xx: the delivery is done
	OutcomeRetry     = "retry"     // not delivered; another attempt is scheduled
	OutcomeFailed    = "failed"    // not delivered, and that was the last attempt
	OutcomeGone      = "gone"      // 410: the webhook was disabled, the delivery ended
)

// Outcomes lists every outcome an Observer may be told.
func Outcomes() []string {
	return []string{OutcomeDelivered, OutcomeRetry, OutcomeFailed, OutcomeGone}
}

// Observer learns of every recorded attempt (metrics: attempts by outcome,
// their latency). A delivery ended without a request (its webhook disabled)
// is no attempt and is not told. It must return at once: it runs on the
// attempt's goroutine.
type Observer interface {
	DeliveryAttempted(outcome string, took time.Duration)
}

// DispatcherOptions are the parts and bounds of a Dispatcher. Zero values
// take the defaults.
type DispatcherOptions struct {
	DB     *ent.Client
	Sender *Sender
	// Schedule is --webhook-retry: the delay before each attempt, the
	// first counted from the delivery's creation, the others from the end
	// of the attempt before. Empty: one attempt.
	Schedule []time.Duration
	// Concurrency bounds the attempts in flight in all; PerWebhook bounds
	// those of one webhook, so a slow or dead receiver holds at most
	// PerWebhook of the Concurrency slots and the other webhooks keep the
	// rest. PerSession and PerUser bound those of one session's webhooks
	// and of one user's sessions, so one user's many webhooks to receivers
	// that never answer leave the other users slots; the slots that free
	// up go round-robin to the users and sessions with deliveries due.
	// Zero: PerSession max(Concurrency/4, 2×PerWebhook), PerUser
	// max(Concurrency/2, PerSession); none above Concurrency.
	Concurrency int
	PerWebhook  int
	PerSession  int
	PerUser     int
	// Lease is how long a claimed delivery is not due for anyone else: a
	// process that dies mid-attempt leaves it due again after the lease.
	// Zero: the Sender's timeout plus 30s.
	Lease time.Duration
	// PollInterval is how often the outbox is read again when nothing
	// woke the dispatcher: deliveries stored without a Wake (another
	// process, a writer that does not call it) wait at most this long.
	PollInterval time.Duration
	// Now is the clock of claims, attempt times and durations (nil:
	// time.Now); Jitter spreads retries (NextAttempt; nil: rand.Float64).
	Now      func() time.Time
	Jitter   func() float64
	Logger   *slog.Logger
	Observer Observer // nil: none
}

// Dispatcher delivers the outbox: it claims due PENDING deliveries, shared
// fairly between users and sessions and oldest first within each, POSTs
// each event through the Sender, and records every attempt with the
// delivery's next state in one transaction. Its state is only the rows,
// so a restart resumes every pending delivery.
//
// A delivery of a disabled webhook is ended FAILED ("webhook disabled")
// when it comes due, without an attempt; redeliver sends it again once the
// webhook is enabled. A webhook.test delivery is attempted whatever the
// webhook's state: testing a disabled receiver before enabling it is the
// point of the test.
type Dispatcher struct {
	db           *ent.Client
	sender       *Sender
	schedule     []time.Duration
	concurrency  int
	bounds       bounds
	lease        time.Duration
	pollInterval time.Duration
	now          func() time.Time
	jitter       func() float64
	log          *slog.Logger
	observer     Observer

	wake   chan struct{} // capacity 1: "deliveries may be due"
	owners owners        // the claim pass's memory of webhooks' owners
}

// NewDispatcher returns a Dispatcher; Run runs it.
func NewDispatcher(opts DispatcherOptions) *Dispatcher {
	d := &Dispatcher{
		db: opts.DB, sender: opts.Sender, schedule: append([]time.Duration(nil), opts.Schedule...),
		concurrency: opts.Concurrency, lease: opts.Lease,
		pollInterval: opts.PollInterval, now: opts.Now, jitter: opts.Jitter, log: opts.Logger,
		observer: opts.Observer, wake: make(chan struct{}, 1),
	}
	if d.sender == nil {
		d.sender = NewSender(nil, 0, opts.Logger)
	}
	if d.concurrency <= 0 {
		d.concurrency = DefaultConcurrency
	}
	d.bounds = defaultBounds(d.concurrency, bounds{webhook: opts.PerWebhook, session: opts.PerSession, user: opts.PerUser})
	if d.lease <= 0 {
		d.lease = d.sender.timeout + leaseMargin
	}
	if d.pollInterval <= 0 {
		d.pollInterval = DefaultPollInterval
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.jitter == nil {
		d.jitter = rand.Float64
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d
}

// Wake says deliveries were committed that may be due now. It never
// blocks; without it they are found at the next poll.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default: // already signalled
	}
}

// Run delivers until ctx ends, then stops its attempts in flight (their
// claims are given back: due at once for the next run) and returns when
// every goroutine it started has ended. Run is called once.
func (d *Dispatcher) Run(ctx context.Context) {
	// The recorder outlives the attempts: it ends when records is closed,
	// after every attempt has ended (defers run last first).
	records := make(chan *recordReq, d.concurrency)
	var recorder sync.WaitGroup
	recorder.Go(func() { d.recordLoop(ctx, records) })
	defer recorder.Wait()
	defer close(records)
	var wg sync.WaitGroup
	defer wg.Wait()
	// An attempt ends by sending its delivery id; the buffer holds one per
	// slot, so an attempt never waits for Run (which may have returned).
	finished := make(chan string, d.concurrency)
	f := newFlight()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		for _, dlv := range d.fill(ctx, f, timer) {
			wg.Go(func() {
				defer func() { finished <- dlv.ID }()
				d.attempt(ctx, dlv, records)
			})
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case id := <-finished:
			f.remove(id)
			// Attempts recorded in one batch end together: take every one
			// that has ended before claiming again, so that one claim
			// pass (one transaction) fills their slots, not one pass each.
			for more := true; more; {
				select {
				case id := <-finished:
					f.remove(id)
				default:
					more = false
				}
			}
		case <-timer.C:
		}
	}
}

// fill claims due deliveries while slots are free and returns them
// (already counted in f); it sets timer to when the outbox should be read
// again, and leaves it stopped when only a finishing attempt can free a
// slot.
func (d *Dispatcher) fill(ctx context.Context, f *flight, timer *time.Timer) []*ent.Delivery {
	var started []*ent.Delivery
	timer.Stop()
	for len(f.ids) < d.concurrency {
		if ctx.Err() != nil {
			return started
		}
		// Deliveries in flight and those of webhooks, sessions and users
		// at their bound are not looked at: the clock is read only when
		// some other delivery waits, so an idle dispatcher reads nothing
		// but the outbox.
		busy, full := f.deliveryIDs(), f.full(d.bounds)
		next, found, err := d.nextDue(ctx, busy, full)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("webhook outbox could not be read", "err", err)
			}
			timer.Reset(d.pollInterval)
			return started
		}
		if !found {
			timer.Reset(d.pollInterval)
			return started
		}
		now := d.now()
		if wait := next.Sub(now); wait > 0 {
			timer.Reset(min(wait, d.pollInterval))
			return started
		}
		won, contended, err := d.claim(ctx, now, busy, full, d.concurrency-len(f.ids), f.load, f.add)
		started = append(started, won...) // counted in f; none on an error (rolled back)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("webhook deliveries could not be claimed", "err", err)
			}
			timer.Reset(d.pollInterval)
			return started
		}
		// Nothing won means another claimer took what was due: the next
		// read sees the outbox without it, unless that claimer has not
		// committed yet (contended): its rows stay due to nextDue until
		// then, so this dispatcher waits for the poll (or a wake, or a
		// finished attempt) rather than spinning on them.
		if contended {
			timer.Reset(d.pollInterval)
			return started
		}
	}
	return started
}
