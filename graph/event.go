package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
)

// Bounds of the events query.
const (
	DefaultEventsPage = 50
	MaxEventsPage     = 500
)

// eventBus returns the bus, or an internal error where none is wired.
func (r *Resolver) eventBus() (*events.Bus, error) {
	if r.Events == nil {
		return nil, errors.New("the event bus is not wired")
	}
	return r.Events, nil
}

// eventKinds converts the kinds argument (nil or empty: every kind).
func eventKinds(kinds []model.EventKind) ([]events.Kind, error) {
	out := make([]events.Kind, 0, len(kinds))
	for i, k := range kinds {
		kind, ok := events.FromEnum(string(k))
		if !ok { // the schema's enum and the kind table disagree
			return nil, fault.InvalidField(fmt.Sprintf("kinds.%d", i), "kinds: unknown event kind %s", fault.Clip(string(k), fault.QuoteLen))
		}
		out = append(out, kind)
	}
	return out, nil
}

// eventCursor is the point after the event id of a session: the after
// argument.
func (r *Resolver) eventCursor(ctx context.Context, bus *events.Bus, sessionID, id string) (events.Cursor, error) {
	env, err := bus.Log().Find(ctx, sessionID, id)
	if errors.Is(err, events.ErrNotFound) {
		return events.Cursor{}, fault.InvalidField("after",
			"after must be the id of an event of session %s (evt_…); %q is not one, or it was pruned (--event-retention)",
			sessionID, fault.Clip(id, fault.QuoteLen))
	}
	if err != nil {
		return events.Cursor{}, err
	}
	return events.Cursor{Seq: env.Seq, ID: env.ID}, nil
}

func toEvent(e events.Envelope) *model.Event {
	return &model.Event{ID: e.ID, Seq: int(e.Seq), Kind: model.EventKind(e.Kind.Enum()), SessionID: e.SessionID,
		OccurredAt: e.Timestamp, Data: model.JSON(e.Data)}
}

// eventsPage answers the events query: in seq order, or the newest first.
func (r *Resolver) eventsPage(ctx context.Context, sessionID string, kinds []model.EventKind, after *string, first *int, newestFirst bool) (*model.EventConnection, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	n := DefaultEventsPage
	if first != nil {
		n = *first
	}
	if n < 1 || n > MaxEventsPage {
		return nil, fault.InvalidField("first", "first must be between 1 and %d (got %d)", MaxEventsPage, n)
	}
	ks, err := eventKinds(kinds)
	if err != nil {
		return nil, err
	}
	bus, err := r.eventBus()
	if err != nil {
		return nil, err
	}
	var from events.Cursor
	if after != nil {
		if from, err = r.eventCursor(ctx, bus, sessionID, *after); err != nil {
			return nil, err
		}
	}
	var envs []events.Envelope
	if newestFirst {
		envs, err = bus.Log().Before(ctx, sessionID, from.Seq, ks, n+1)
	} else {
		envs, err = bus.Log().After(ctx, sessionID, from.Seq, ks, n+1)
	}
	if err != nil {
		return nil, err
	}
	conn := &model.EventConnection{Edges: make([]*model.EventEdge, 0, min(n, len(envs))), PageInfo: &model.PageInfo{}}
	if len(envs) > n {
		envs, conn.PageInfo.HasNextPage = envs[:n], true
	}
	for _, e := range envs {
		conn.Edges = append(conn.Edges, &model.EventEdge{Cursor: e.ID, Node: toEvent(e)})
	}
	if len(envs) > 0 {
		last := envs[len(envs)-1].ID
		conn.PageInfo.EndCursor = &last
	}
	return conn, nil
}

// storedEvent answers the event query: nil when the session's log holds
// no event id.
func (r *Resolver) storedEvent(ctx context.Context, sessionID, id string) (*model.Event, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	bus, err := r.eventBus()
	if err != nil {
		return nil, err
	}
	env, err := bus.Log().Find(ctx, sessionID, id)
	if errors.Is(err, events.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return toEvent(env), nil
}

// eventKindNames answers the eventKinds query from the kind table: the
// selectable kinds, then webhook.test.
func eventKindNames() []*model.EventKindName {
	out := make([]*model.EventKindName, 0, len(events.Selectable())+1)
	for _, k := range append(events.Selectable(), events.WebhookTest) {
		out = append(out, &model.EventKindName{Kind: model.EventKind(k.Enum()), Name: string(k), Selectable: k.IsSelectable()})
	}
	return out
}

// followEvents answers the events subscription: the bus's subscription,
// bound to the caller's token (revoking it ends the stream, whatever the
// transport), and ended by the session's deletion.
func (r *Resolver) followEvents(ctx context.Context, sessionID string, kinds []model.EventKind, after *string) (<-chan *model.Event, error) {
	p, _, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	ks, err := eventKinds(kinds)
	if err != nil {
		return nil, err
	}
	bus, err := r.eventBus()
	if err != nil {
		return nil, err
	}
	var from *events.Cursor
	if after != nil {
		c, err := r.eventCursor(ctx, bus, sessionID, *after)
		if err != nil {
			return nil, err
		}
		from = &c
	}
	ctx, release, err := r.openSubscription(ctx, p)
	if err != nil {
		return nil, err
	}
	sub, err := bus.Subscribe(ctx, sessionID, ks, from)
	if err != nil {
		release()
		return nil, err
	}
	// deleteSession deletes the record, then ends the session's
	// subscriptions: one registered after that finds the record gone here.
	exists, err := r.Sessions.Exists(ctx, sessionID)
	if ctx.Err() != nil {
		// The token was revoked (or the subscriber left) while the stream
		// was being set up: it ends as it would have a moment later.
		sub.Close()
		release()
		ch := make(chan *model.Event)
		close(ch)
		return ch, nil
	}
	if err != nil || !exists {
		sub.Close()
		release()
		if err != nil {
			return nil, err
		}
		return nil, SessionNotFound(sessionID)
	}
	// Unbuffered: the bus's buffer is the subscriber's, so a consumer that
	// stops reading is cut there.
	ch := make(chan *model.Event)
	path := eventsPath(ctx)
	lane := takeLane(ctx)
	go func() {
		defer close(ch)
		defer release()
		defer sub.Close()
		// Closing the lane hands the rest of the stream to gqlgen.
		endLane := func() {
			if lane != nil {
				close(lane.ch)
				lane = nil
			}
		}
		defer endLane()
		for {
			env, err := sub.Next(ctx)
			if err == nil && lane != nil {
				if b, ok := lane.plan.encode(env); ok {
					select {
					case lane.ch <- b:
					case <-ctx.Done():
						return
					}
					continue
				}
				endLane()
			}
			ev := (*model.Event)(nil)
			var lag *events.LaggedError
			switch {
			case err == nil:
				ev = toEvent(env)
			case errors.As(err, &lag):
				// Data is set so that only End's error is reported.
				ev = &model.Event{End: laggedError(lag, path), Data: model.JSON("null")}
			default:
				return // the subscriber left, its token was revoked, the session was deleted, the server stops
			}
			endLane()
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.End != nil {
				return
			}
		}
	}()
	return ch, nil
}

// laggedError is the error that ends a subscriber that fell behind:
// RATE_LIMITED, with the last event it received in extensions.lastEventId
// (null when it received none and started live), on the subscription
// field's path.
func laggedError(lag *events.LaggedError, path ast.Path) error {
	var last any
	if lag.LastID != "" {
		last = lag.LastID
	}
	f := fault.New(fault.RateLimited, "%s", lag.Error())
	return &gqlerror.Error{Err: f, Message: f.Message, Path: path, Extensions: map[string]any{"lastEventId": last}}
}

// eventsPath is the path of the events subscription field in the operation
// of ctx. The error that ends a stream is given it when it is made: a
// streamed value is marshalled without its field's context, so gqlgen
// would not know it.
func eventsPath(ctx context.Context) ast.Path {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	for _, sel := range graphql.GetOperationContext(ctx).Operation.SelectionSet {
		if f, ok := sel.(*ast.Field); ok && f.Name == "events" {
			return ast.Path{ast.PathName(f.Alias)}
		}
	}
	return nil
}
