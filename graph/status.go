package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// MaxStatusSessions bounds the sessions one sessionStatuses stream follows:
// each is a bus subscription and a goroutine for as long as the stream
// lasts, and the stream reads the state of each at its start.
const MaxStatusSessions = 500

// statusReadsAtOnce bounds the states a sessionStatuses stream reads at
// its start at the same time: in a cluster each may be a call to another
// process, and a stream of hundreds of sessions should not make them all
// at once.
const statusReadsAtOnce = 8

// statusKinds are the events that change what sessionStatus shows: a
// function, so that no package-level slice can be changed under it.
func statusKinds() []events.Kind { return []events.Kind{events.ConnectionUpdate, events.CredsUpdate} }

// watchState calls fn with the session's state now and again after each
// change, until fn returns false, ctx is done or the session is deleted
// (NOT_FOUND). The state is read once (as the session query reads it); the
// changes are the session's connection.update and creds.update events
// applied to it. The bus brings those to every process of a cluster (it
// follows the log on PostgreSQL), so a session another process runs is
// followed without asking that process anything: the same code on one
// process or many.
//
// The bus subscription is registered before the state is read, so no
// change is missed; one committed between the two is applied again, which
// can show an older state for a moment before the newer one. A watcher
// that falls behind the bus reads the state again.
func (r *Resolver) watchState(ctx context.Context, sessionID string, fn func(whatsapp.SessionState) bool) error {
	bus, err := r.eventBus()
	if err != nil {
		return err
	}
	var last *whatsapp.SessionState
	emit := func(st whatsapp.SessionState) bool {
		if last != nil && sameLiveState(*last, st) {
			return true
		}
		last = &st
		return fn(st)
	}
	for {
		sub, err := bus.Subscribe(ctx, sessionID, statusKinds(), nil)
		if err != nil {
			return err
		}
		st, err := r.WhatsApp.Status(ctx, sessionID)
		if err == nil && emit(st) {
			err = r.followState(ctx, sessionID, sub, st, emit)
		}
		sub.Close()
		var lag *events.LaggedError
		if !errors.As(err, &lag) {
			return err
		}
	}
}

// followState applies the subscription's events to st and emits each
// result, until emit returns false (nil) or the subscription ends (its
// error; a deleted session's is NOT_FOUND).
func (r *Resolver) followState(ctx context.Context, sessionID string, sub *events.Subscription, st whatsapp.SessionState, emit func(whatsapp.SessionState) bool) error {
	for {
		env, err := sub.Next(ctx)
		if errors.Is(err, events.ErrSessionEnded) {
			return SessionNotFound(sessionID)
		}
		if err != nil {
			return err
		}
		st = r.applyStatusEvent(ctx, st, env)
		if !emit(st) {
			return nil
		}
	}
}

// applyStatusEvent is st after env, as the manager changed its own state
// when it published env (whatsapp.SessionState.Applied, the one home of
// that rule); the time a session became CONNECTED comes from its record
// (the manager saves it before it publishes the change), the event's time
// when the record has none.
func (r *Resolver) applyStatusEvent(ctx context.Context, st whatsapp.SessionState, env events.Envelope) whatsapp.SessionState {
	return st.Applied(string(env.Kind), env.Data, func() time.Time {
		if at, ok, err := r.Sessions.ConnectedAt(ctx, env.SessionID); err == nil && ok {
			return at
		}
		return env.Timestamp.UTC()
	})
}

// sameLiveState reports whether two states show the same thing, so a
// watcher sends only changes.
func sameLiveState(a, b whatsapp.SessionState) bool {
	ct := a.ConnectedAt.Equal(b.ConnectedAt)
	a.ConnectedAt, b.ConnectedAt = time.Time{}, time.Time{}
	return ct && a == b
}

// followSessionStatus answers the sessionStatus subscription.
func (r *Resolver) followSessionStatus(ctx context.Context, sessionID string) (<-chan *model.Session, error) {
	p, s, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	// Bound to the token, as the events are: a revocation (here or on
	// another process) ends the stream over every transport.
	ctx, release, err := r.openSubscription(ctx, p)
	if err != nil {
		return nil, err
	}
	// One slot: the bus holds what a slow subscriber has not taken yet,
	// and one that falls behind it reads the state again (watchState).
	ch := make(chan *model.Session, 1)
	go func() {
		defer close(ch)
		defer release()
		// The stream ends when the subscriber leaves or the session is
		// deleted (NOT_FOUND): closing the channel completes it.
		_ = r.watchState(ctx, sessionID, func(st whatsapp.SessionState) bool {
			select {
			case ch <- toLiveSession(s, st):
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return ch, nil
}

// followSessionStatuses answers the sessionStatuses subscription: one
// watchState per session the token reaches, into one stream. It ends when
// the subscriber leaves or its token ends; a session's failure other than
// its deletion ends it too, rather than leave that session silently
// unfollowed.
func (r *Resolver) followSessionStatuses(ctx context.Context) (<-chan *model.SessionStatusEvent, error) {
	p, err := auth.Require(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.eventBus(); err != nil {
		return nil, err
	}
	ss, err := r.Sessions.List(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(ss) > MaxStatusSessions {
		return nil, fault.New(fault.RateLimited,
			"sessionStatuses follows at most %d sessions and this token reaches %d: follow them one by one with sessionStatus", MaxStatusSessions, len(ss))
	}
	ctx, release, err := r.openSubscription(ctx, p)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan *model.SessionStatusEvent, 1)
	send := func(ev *model.SessionStatusEvent) bool {
		select {
		case ch <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var wg sync.WaitGroup
	reading := make(chan struct{}, statusReadsAtOnce)
	for _, s := range ss {
		wg.Add(1)
		go func(s *ent.Session) {
			defer wg.Done()
			// A slot until the first state is read (or the watch ends).
			select {
			case reading <- struct{}{}:
			case <-ctx.Done():
				return
			}
			var once sync.Once
			read := func() { once.Do(func() { <-reading }) }
			defer read()
			err := r.watchState(ctx, s.ID, func(st whatsapp.SessionState) bool {
				read()
				return send(&model.SessionStatusEvent{SessionID: s.ID, Session: toLiveSession(s, st)})
			})
			switch {
			case ctx.Err() != nil:
			case isNotFound(err):
				send(&model.SessionStatusEvent{SessionID: s.ID})
			default:
				cancel()
			}
		}(s)
	}
	go func() {
		// The stream lasts until its subscriber leaves, whatever its
		// sessions do.
		wg.Wait()
		<-ctx.Done()
		cancel()
		release()
		close(ch)
	}()
	return ch, nil
}
