package graph

import (
	"bytes"
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
)

// The events subscription's lane: gqlgen executes a subscription's
// selection for every event and every subscriber, so a fan-out of one
// event to 1,000 subscribers built the same bytes 1,000 times (most of the
// server's CPU under goal 4, BENCHMARKS.md). An operation that is only the
// events field with a plain selection of Event's scalars (aliases allowed;
// no fragment, directive or argument) takes the lane instead: followEvents
// hands each event's response bytes, encoded once per envelope and
// selection for all the subscribers it was fanned out to (events.Memo),
// straight to the transport. Anything else, and every stream's end (the
// lag error, the completion), goes gqlgen's way, which the lane falls back
// to once it is closed. The bytes are gqlgen's own: its marshalers, in the
// order and form its executor writes them (TestEventLaneSameBytes).

// laneKey is the context key of an operation's lane.
type laneKey struct{}

// eventLane is one events subscription's lane, from followEvents to the
// operation's response handler.
type eventLane struct {
	plan eventPlan
	ch   chan []byte // closed: the rest of the stream is gqlgen's
	used bool        // followEvents took it (set before the handler runs)
}

// eventPlan is a plannable selection: the root field's alias and, in
// order, each Event field's alias and name.
type eventPlan struct {
	root   string
	fields []planField
	key    string // the memo key: the selection's shape
}

type planField struct{ alias, name string }

// laneOperations is the operation middleware that offers an events
// subscription its lane.
func laneOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx).Operation
	if op == nil || op.Operation != ast.Subscription {
		return next(ctx)
	}
	plan, ok := planEvents(op.SelectionSet)
	if !ok {
		return next(ctx)
	}
	lane := &eventLane{plan: plan, ch: make(chan []byte)}
	h := next(context.WithValue(ctx, laneKey{}, lane))
	if !lane.used {
		return h // the resolver refused, or the stream is gqlgen's
	}
	gqlgen := false
	return func(ctx context.Context) *graphql.Response {
		if gqlgen {
			return h(ctx)
		}
		select {
		case b, ok := <-lane.ch:
			if !ok {
				gqlgen = true
				return h(ctx)
			}
			return &graphql.Response{Data: b}
		case <-ctx.Done():
			return nil
		}
	}
}

// takeLane returns the lane offered to this operation, if any, and marks
// it taken: the resolver then sends its events there.
func takeLane(ctx context.Context) *eventLane {
	lane, _ := ctx.Value(laneKey{}).(*eventLane)
	if lane != nil {
		lane.used = true
	}
	return lane
}

// laneField reports whether the lane writes Event's field name.
func laneField(name string) bool {
	switch name {
	case "__typename", "id", "seq", "kind", "sessionId", "occurredAt", "data":
		return true
	}
	return false
}

// planEvents plans a subscription's selection: exactly the events field,
// without directives, selecting only Event's scalar fields, each alias
// once, without directives, arguments or fragments.
func planEvents(sel ast.SelectionSet) (eventPlan, bool) {
	if len(sel) != 1 {
		return eventPlan{}, false
	}
	root, ok := sel[0].(*ast.Field)
	if !ok || root.Name != "events" || len(root.Directives) > 0 || len(root.SelectionSet) == 0 {
		return eventPlan{}, false
	}
	p := eventPlan{root: root.Alias}
	seen := map[string]bool{}
	var key strings.Builder
	key.WriteString(root.Alias)
	for _, s := range root.SelectionSet {
		f, ok := s.(*ast.Field)
		if !ok || !laneField(f.Name) || len(f.Directives) > 0 || len(f.Arguments) > 0 || len(f.SelectionSet) > 0 || seen[f.Alias] {
			return eventPlan{}, false
		}
		seen[f.Alias] = true
		p.fields = append(p.fields, planField{alias: f.Alias, name: f.Name})
		key.WriteString("\x00" + f.Alias + "\x00" + f.Name)
	}
	p.key = key.String()
	return p, true
}

// encode is the response data of env under the plan, shared through the
// envelope's memo; false when gqlgen would not write it as it is (no data:
// a non-null field would be null).
func (p *eventPlan) encode(env events.Envelope) ([]byte, bool) {
	return env.Memo.Load(p.key, func() ([]byte, bool) {
		if len(env.Data) == 0 {
			return nil, false
		}
		ev := toEvent(env)
		var w bytes.Buffer
		w.WriteByte('{')
		graphql.MarshalString(p.root).MarshalGQL(&w)
		w.WriteString(":{")
		for i, f := range p.fields {
			if i > 0 {
				w.WriteByte(',')
			}
			graphql.MarshalString(f.alias).MarshalGQL(&w)
			w.WriteByte(':')
			var m graphql.Marshaler
			switch f.name {
			case "__typename":
				m = graphql.MarshalString("Event")
			case "id":
				m = graphql.MarshalID(ev.ID)
			case "seq":
				m = graphql.MarshalInt(ev.Seq)
			case "kind":
				m = ev.Kind
			case "sessionId":
				m = graphql.MarshalID(ev.SessionID)
			case "occurredAt":
				m = model.MarshalTime(ev.OccurredAt)
			case "data":
				m = ev.Data
			}
			m.MarshalGQL(&w)
		}
		w.WriteString("}}")
		return w.Bytes(), true
	})
}
