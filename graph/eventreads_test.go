package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/events"
)

type readEvent struct {
	ID   string
	Seq  int
	Kind string
	Data map[string]any
}

// TestEventsNewestFirst: with newestFirst the events query pages the log
// from the newest down (after: the event the page goes on below), kinds
// filtering as in seq order; the event query reads one event of the
// session by id, null for another session's or an unknown one, NOT_FOUND
// for a session the token does not reach.
func TestEventsNewestFirst(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "log")
	other := srv.CreateSession(t, "other")
	var news []events.New
	for i := range 7 {
		kind := events.Call
		if i%2 == 1 {
			kind = events.PresenceUpdate
		}
		news = append(news, events.New{Kind: kind, Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	envs, err := srv.App.Bus().Publish(context.Background(), sid, news)
	if err != nil {
		t.Fatal(err)
	}
	otherEnvs, err := srv.App.Bus().Publish(context.Background(), other, []events.New{{Kind: events.Call, Data: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}

	const q = `query($s: ID!, $k: [EventKind!], $a: String, $f: Int, $n: Boolean) {
  events(sessionId: $s, kinds: $k, after: $a, first: $f, newestFirst: $n) { edges { cursor node { id seq kind data } } pageInfo { hasNextPage endCursor } }
}`
	tests := []struct {
		name string
		vars map[string]any
		want []int // indexes in envs
		more bool
	}{
		{"the newest page", map[string]any{"f": 3}, []int{6, 5, 4}, true},
		{"below an event", map[string]any{"f": 3, "a": envs[4].ID}, []int{3, 2, 1}, true},
		{"down to the oldest", map[string]any{"f": 3, "a": envs[1].ID}, []int{0}, false},
		{"below the oldest", map[string]any{"a": envs[0].ID}, nil, false},
		{"of a kind", map[string]any{"f": 2, "k": []string{"CALL"}}, []int{6, 4}, true},
		{"of a kind, below an event of another", map[string]any{"k": []string{"CALL"}, "a": envs[5].ID}, []int{4, 2, 0}, false},
		{"every event", map[string]any{}, []int{6, 5, 4, 3, 2, 1, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{"s": sid, "n": true}
			for k, v := range tt.vars {
				vars[k] = v
			}
			var r struct {
				Events struct {
					Edges []struct {
						Cursor string
						Node   readEvent
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
			srv.MustGraphQL(t, apptest.AdminToken, q, vars, &r)
			var got, want []int
			for _, e := range r.Events.Edges {
				got = append(got, e.Node.Seq)
				if e.Cursor != e.Node.ID {
					t.Errorf("edge %+v: its cursor is not its event's id", e)
				}
			}
			for _, i := range tt.want {
				want = append(want, int(envs[i].Seq))
			}
			if !slices.Equal(got, want) || r.Events.PageInfo.HasNextPage != tt.more {
				t.Errorf("seqs %v, hasNextPage %v; want %v, %v", got, r.Events.PageInfo.HasNextPage, want, tt.more)
			}
			if n := len(r.Events.Edges); n > 0 && (r.Events.PageInfo.EndCursor == nil || *r.Events.PageInfo.EndCursor != r.Events.Edges[n-1].Cursor) {
				t.Errorf("endCursor %v, the last edge's %s", r.Events.PageInfo.EndCursor, r.Events.Edges[n-1].Cursor)
			}
		})
	}
	// Without newestFirst, or with it false: seq order, as before.
	for _, n := range []any{nil, false} {
		var r struct {
			Events struct{ Edges []struct{ Node readEvent } }
		}
		srv.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sid, "f": 2, "n": n}, &r)
		if len(r.Events.Edges) != 2 || r.Events.Edges[0].Node.ID != envs[0].ID || r.Events.Edges[1].Node.ID != envs[1].ID {
			t.Errorf("newestFirst %v: %+v, want the first two events", n, r.Events.Edges)
		}
	}

	const one = `query($s: ID!, $id: ID!) { event(sessionId: $s, id: $id) { id seq kind data } }`
	var found struct{ Event *readEvent }
	srv.MustGraphQL(t, apptest.AdminToken, one, map[string]any{"s": sid, "id": envs[3].ID}, &found)
	if e := found.Event; e == nil || e.ID != envs[3].ID || e.Seq != int(envs[3].Seq) || e.Kind != "PRESENCE_UPDATE" || e.Data["n"] != 3.0 {
		t.Errorf("event %s: %+v", envs[3].ID, found.Event)
	}
	for _, id := range []string{otherEnvs[0].ID, "evt_nope"} {
		found.Event = &readEvent{}
		srv.MustGraphQL(t, apptest.AdminToken, one, map[string]any{"s": sid, "id": id}, &found)
		if found.Event != nil {
			t.Errorf("event %s of session %s: %+v, want null", id, sid, found.Event)
		}
	}
	var tok struct{ CreateSessionToken string }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": other}, &tok)
	res := srv.GraphQL(t, tok.CreateSessionToken, one, map[string]any{"s": sid, "id": envs[0].ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("another session's token: %+v, want NOT_FOUND", res.Errors)
	}
}

// TestEventKindNames: eventKinds is internal/events' table of kinds, in its
// order (the selectable ones, then webhook.test), each under its enum value
// and the name webhooks give it.
func TestEventKindNames(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	var r struct {
		EventKinds []struct {
			Kind, Name string
			Selectable bool
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `{ eventKinds { kind name selectable } }`, nil, &r)
	want := append(events.Selectable(), events.WebhookTest)
	if len(r.EventKinds) != len(want) {
		t.Fatalf("%d kinds, want %d: %+v", len(r.EventKinds), len(want), r.EventKinds)
	}
	for i, k := range want {
		got := r.EventKinds[i]
		if got.Kind != k.Enum() || got.Name != string(k) || got.Selectable != (k != events.WebhookTest) {
			t.Errorf("kind %d: %+v, want %s named %s (selectable: %v)", i, got, k.Enum(), k, k != events.WebhookTest)
		}
	}
}
