package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many live events a subscriber may have waiting
// before it is cut off.
const DefaultBuffer = 256

// replayPage is how many stored events a replay reads at once, and
// replayBytes how much of their data: a subscriber that does not read
// holds one page, so together they bound what it can make the server
// hold, whatever the size of the session's events.
const (
	replayPage  = 256
	replayBytes = 1 << 20
)

// ErrSessionEnded ends the subscriptions of a session that was deleted.
var ErrSessionEnded = errors.New("session deleted")

// ErrBusClosed ends the subscriptions still open when the Bus closes.
var ErrBusClosed = errors.New("event bus closed")

// ErrSubscriptionClosed is what Next returns after Close.
var ErrSubscriptionClosed = errors.New("subscription closed")

// errCut marks a subscription the fan-out cut off; Next turns it into a
// LaggedError naming what its consumer last received.
var errCut = errors.New("subscriber fell behind")

// LaggedError ends a subscription whose consumer fell behind: more live
// events waited than its buffer holds. It resumes with after = LastID.
type LaggedError struct {
	LastID string // the last event delivered, or the one it started after; "" when neither
	Buffer int
}

func (e *LaggedError) Error() string {
	if e.LastID == "" {
		return fmt.Sprintf("subscriber fell behind (more than %d events waiting) before any event was delivered", e.Buffer)
	}
	return fmt.Sprintf("subscriber fell behind (more than %d events waiting); the last event delivered was %s: resume with after %s",
		e.Buffer, e.LastID, e.LastID)
}

// SubscriberObserver learns when subscriptions start and end (metrics).
type SubscriberObserver interface {
	SubscriberStarted()
	SubscriberEnded()
}

// StoredObserver learns of every event committed, by kind (metrics).
type StoredObserver interface{ EventStored(kind string) }

// BusOptions are the bounds and observers of a Bus.
type BusOptions struct {
	// Buffer is how many live events one subscriber may have waiting;
	// 0 means DefaultBuffer.
	Buffer   int
	Observer SubscriberObserver // nil: none
	// Stored is told the kind of every event the log commits, whoever
	// published it (the session sink, testWebhook), once: an event found
	// already stored under its key is not told again. nil: none.
	Stored StoredObserver
	// Follow makes the bus fan out what the log holds rather than what this
	// process commits: on PostgreSQL, where other processes commit events of
	// the same sessions, a listener hands their notifications to Notified
	// (follow.go). Off, the fan-out is the local commits (SQLite: one process).
	Follow bool
	Logger *slog.Logger // nil discards
}

// Bus is the session event stream: Publish stores events in the Log and,
// once they are committed, hands them to the live subscribers of their
// session; Subscribe replays the log after a point and continues live.
//
// The fan-out runs in the Log's writer goroutine, right after each commit,
// so every subscriber sees a session's events in seq order whoever published
// them. It never blocks: a subscriber whose buffer is full is cut off and
// learns the last event it got (LaggedError).
//
// A following bus (BusOptions.Follow, PostgreSQL) fans out what the log
// holds instead, whichever process committed it (follow.go).
type Bus struct {
	log      *Log
	buffer   int
	observer SubscriberObserver
	stored   StoredObserver

	mu     sync.Mutex
	subs   map[string]map[*Subscription]struct{} // by session
	closed bool
	count  atomic.Int64

	follower *follower // nil unless BusOptions.Follow
}

// NewBus returns the bus over log; one log has one bus.
func NewBus(log *Log, opts BusOptions) *Bus {
	b := &Bus{log: log, buffer: opts.Buffer, observer: opts.Observer, stored: opts.Stored, subs: map[string]map[*Subscription]struct{}{}}
	if b.buffer <= 0 {
		b.buffer = DefaultBuffer
	}
	fanOut := b.fanOut
	if opts.Follow {
		logger := opts.Logger
		if logger == nil {
			logger = slog.New(slog.DiscardHandler)
		}
		b.follower = startFollower(b, logger)
		fanOut = b.committedFollowed
	}
	log.committed.Store(&fanOut)
	return b
}

// Log is the log the bus writes to.
func (b *Bus) Log() *Log { return b.log }

// Publish stores evs of a session in one transaction (Log.Append) and
// returns their envelopes once committed; by then the live subscribers of
// the session have them, unless the bus follows the log and events another
// process committed come first: then the follower hands them all on, in
// seq order, after it has read those.
func (b *Bus) Publish(ctx context.Context, sessionID string, evs []New) ([]Envelope, error) {
	return b.log.Append(ctx, sessionID, evs)
}

// PublishWith is Publish of the events build returns, build's writes and
// the events in one transaction (Log.AppendWith).
func (b *Bus) PublishWith(ctx context.Context, sessionID string, size int, build Build) ([]Envelope, error) {
	return b.log.AppendWith(ctx, sessionID, size, build)
}

// Subscribers is how many subscriptions are open.
func (b *Bus) Subscribers() int { return int(b.count.Load()) }

// fanOut hands the envelopes of one committed append (one session, seq
// order, none found already stored) to that session's subscribers, and
// counts them: every append passes here, whichever publisher made it.
func (b *Bus) fanOut(envs []Envelope) {
	if len(envs) == 0 {
		return
	}
	b.countStored(envs)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.offerLocked(envs)
}

// countStored tells the Stored observer of committed envelopes.
func (b *Bus) countStored(envs []Envelope) {
	if b.stored != nil {
		for _, e := range envs {
			b.stored.EventStored(string(e.Kind))
		}
	}
}

// offerLocked hands envelopes of one session, in seq order, to its
// subscribers; b.mu is held.
func (b *Bus) offerLocked(envs []Envelope) {
	subs := b.subs[envs[0].SessionID]
	if len(subs) == 0 {
		return
	}
	// The subscribers' copies share a Memo per envelope (the caller's
	// envelopes are left as they are).
	shared := make([]Envelope, len(envs))
	for i, e := range envs {
		e.Memo = &Memo{}
		shared[i] = e
	}
	envs = shared
	for s := range subs {
		if !s.offer(envs) {
			b.removeLocked(s)
		}
	}
}

// EndSession ends every subscription of a deleted session: each gets what
// was committed before, then ErrSessionEnded.
func (b *Bus) EndSession(sessionID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[sessionID] {
		b.removeLocked(s)
		s.finish(ErrSessionEnded)
	}
}

// Close ends every open subscription (ErrBusClosed) and refuses new ones.
// The Log stays open: the Bus does not own it.
// A following bus stops its follower too.
func (b *Bus) Close() {
	b.mu.Lock()
	b.closed = true
	for _, subs := range b.subs {
		for s := range subs {
			b.removeLocked(s)
			s.finish(ErrBusClosed)
		}
	}
	b.mu.Unlock()
	if b.follower != nil {
		b.follower.stop()
	}
}

func (b *Bus) removeLocked(s *Subscription) {
	subs := b.subs[s.sessionID]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(b.subs, s.sessionID)
		if b.follower != nil {
			b.follower.forgetLocked(s.sessionID)
		}
	}
	b.count.Add(-1)
	if b.observer != nil {
		b.observer.SubscriberEnded()
	}
}

// Cursor is a point in a session's log: just after the event Seq (whose id
// is ID). The zero Cursor is before the first event.
type Cursor struct {
	Seq int64
	ID  string
}

// Subscribe opens a subscription to a session's events of kinds (empty:
// every kind). With from, it first yields the stored events after from,
// then the live ones; without, only the events committed from now on.
// Either way there is no gap and no duplicate, in seq order. It ends when
// ctx ends, when Close is called, when its consumer falls behind
// (LaggedError), or when the session is deleted (ErrSessionEnded).
//
// Why no gap: the subscription is registered for live events before the
// log is read, and the fan-out runs only after a commit; so an event is
// either committed before a read began (the read returns it) or fanned out
// after the registration (the live queue holds it), or both. Events both
// read and queued are dropped from the queue by seq.
func (b *Bus) Subscribe(ctx context.Context, sessionID string, kinds []Kind, from *Cursor) (*Subscription, error) {
	s := &Subscription{
		bus: b, sessionID: sessionID, kinds: slices.Clone(kinds),
		replaying: true, signal: make(chan struct{}, 1),
	}
	// A live-only subscription starts after the last event committed
	// before it is registered (and counted): read first, registered then,
	// so an event committed in between is replayed from the log. Read
	// after the registration, the last event could be one committed after
	// the subscriber was counted and already queued live, which Next then
	// dropped as replayed: a caller that waited for the count and then
	// published lost its event (graph's TestEventLaneSameBytes, now and
	// then, more often on PostgreSQL's slower read).
	//
	// A following bus reads the last event in either case: it is where the
	// fan-out of a session starts when the session gets its first
	// subscriber (follower.startLocked says why that keeps the argument).
	var last Cursor
	if from == nil || b.follower != nil {
		env, ok, err := b.log.Last(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		if ok {
			last = Cursor{Seq: env.Seq, ID: env.ID}
		}
	}
	s.last = last
	if from != nil {
		s.last = *from
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrBusClosed
	}
	if b.follower != nil {
		b.follower.startLocked(sessionID, last.Seq)
	}
	if b.subs[sessionID] == nil {
		b.subs[sessionID] = map[*Subscription]struct{}{}
	}
	b.subs[sessionID][s] = struct{}{}
	b.count.Add(1)
	b.mu.Unlock()
	if b.observer != nil {
		b.observer.SubscriberStarted()
	}
	s.stop = context.AfterFunc(ctx, func() { s.end(context.Cause(ctx)) })
	return s, nil
}

// Subscription is one subscriber's stream of a session's events; one
// goroutine reads it with Next.
type Subscription struct {
	bus       *Bus
	sessionID string
	kinds     []Kind
	stop      func() bool // forgets the context's AfterFunc

	// The consumer's: what Next returned last, and the replay page it
	// is handing out.
	last Cursor
	page []Envelope

	mu        sync.Mutex
	replaying bool       // the consumer still reads the log
	queue     []Envelope // live events waiting, at most bus.buffer
	lagged    bool       // the queue overflowed while replaying: read the log again
	err       error      // why the subscription ended; nil while open
	signal    chan struct{}
}

// Next returns the next event, waiting for one. An error ends the
// subscription: a *LaggedError, ErrSessionEnded, ErrBusClosed,
// ErrSubscriptionClosed, the context's cause, or the log's.
func (s *Subscription) Next(ctx context.Context) (Envelope, error) {
	for {
		if len(s.page) > 0 {
			e := s.page[0]
			s.page = s.page[1:]
			s.last = Cursor{Seq: e.Seq, ID: e.ID}
			return e, nil
		}
		s.mu.Lock()
		replaying, err := s.replaying, s.err
		s.mu.Unlock()
		if replaying && err == nil {
			if err := s.replay(ctx); err != nil {
				s.end(err)
				return Envelope{}, err
			}
			continue
		}
		s.mu.Lock()
		for len(s.queue) > 0 && s.queue[0].Seq <= s.last.Seq {
			s.queue = s.queue[1:] // replayed already
		}
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			s.last = Cursor{Seq: e.Seq, ID: e.ID}
			return e, nil
		}
		err = s.err
		s.mu.Unlock()
		if errors.Is(err, errCut) {
			return Envelope{}, &LaggedError{LastID: s.last.ID, Buffer: s.bus.buffer}
		}
		if err != nil {
			return Envelope{}, err
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return Envelope{}, ctx.Err()
		}
	}
}

// replay reads the next page of the log after what was delivered. A short
// page means the log is read up to where the live queue takes over, unless
// the queue overflowed meanwhile: then its events are dropped and read from
// the log instead.
func (s *Subscription) replay(ctx context.Context) error {
	page, more, err := s.bus.log.AfterWithin(ctx, s.sessionID, s.last.Seq, s.kinds, replayPage, replayBytes)
	if err != nil {
		return err
	}
	s.page = page
	if more {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lagged {
		s.lagged = false
		clear(s.queue)
		s.queue = s.queue[:0]
		return nil
	}
	s.replaying = false
	return nil
}

// offer queues the live envelopes the subscription wants. It reports false
// when the subscription is over (cut now, or ended before).
func (s *Subscription) offer(envs []Envelope) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	added := false
	for _, e := range envs {
		if len(s.kinds) > 0 && !slices.Contains(s.kinds, e.Kind) {
			continue
		}
		if len(s.queue) >= s.bus.buffer {
			if !s.replaying {
				clear(s.queue)
				s.queue = nil
				s.err = errCut
				s.wake()
				return false
			}
			// Still reading the log, which holds these too.
			clear(s.queue)
			s.queue = s.queue[:0]
			s.lagged = true
		}
		s.queue = append(s.queue, e)
		added = true
	}
	if added {
		s.wake()
	}
	return true
}

// wake signals the consumer; s.mu is held.
func (s *Subscription) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// finish records why the subscription ended and wakes its consumer; the
// caller holds bus.mu and removes it.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.wake()
}

// end ends the subscription with err (unless it ended already) and
// forgets it.
func (s *Subscription) end(err error) {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	// Uncounted before its consumer wakes: a caller that saw Next end
	// sees the count without it.
	s.bus.removeLocked(s)
	s.finish(err)
}

// Close ends the subscription; Next then returns ErrSubscriptionClosed
// unless it had ended otherwise.
func (s *Subscription) Close() {
	if s.stop != nil {
		s.stop()
	}
	s.end(ErrSubscriptionClosed)
}
