package webhook

import (
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/ent"
)

// due builds candidates, oldest first, from "id:webhook:session:user"
// specs.
func due(specs ...string) []*ent.Delivery {
	out := make([]*ent.Delivery, len(specs))
	for i, s := range specs {
		p := strings.Split(s, ":")
		out[i] = &ent.Delivery{ID: p[0], WebhookID: p[1], Edges: ent.DeliveryEdges{
			Webhook: &ent.Webhook{ID: p[1], SessionID: p[2], Edges: ent.WebhookEdges{Session: &ent.Session{ID: p[2], OwnerID: p[3]}}},
		}}
	}
	return out
}

// TestFairOrder: a claim pass shares its slots round-robin between users,
// then their sessions, oldest first within each, and never takes a
// webhook, session or user past its bound, counting what is in flight.
func TestFairOrder(t *testing.T) {
	wide := bounds{webhook: 10, session: 10, user: 10}
	for _, tt := range []struct {
		name       string
		candidates []*ent.Delivery
		inflight   []owner
		limit      int
		b          bounds
		want       []string
	}{
		{
			name:       "oldest first within one session",
			candidates: due("d1:w1:s1:u1", "d2:w2:s1:u1", "d3:w1:s1:u1"),
			limit:      3, b: wide,
			want: []string{"d1", "d2", "d3"},
		},
		{
			name:       "a backlog does not starve a newer user",
			candidates: due("a1:w1:s1:u1", "a2:w1:s1:u1", "a3:w1:s1:u1", "b1:w9:s9:u9"),
			limit:      2, b: wide,
			want: []string{"a1", "b1"},
		},
		{
			name:       "users before sessions: a user's second session waits for the other user",
			candidates: due("a1:w1:s1:u1", "c1:w2:s2:u1", "b1:w9:s9:u9", "a2:w1:s1:u1"),
			limit:      4, b: wide,
			want: []string{"a1", "b1", "c1", "a2"},
		},
		{
			name:       "the least served goes first, counting attempts in flight",
			candidates: due("a1:w1:s1:u1", "b1:w9:s9:u9", "b2:w9:s9:u9"),
			inflight:   []owner{{"w1", "s1", "u1"}, {"w1", "s1", "u1"}},
			limit:      2, b: wide,
			want: []string{"b1", "b2"},
		},
		{
			name:       "session bound",
			candidates: due("a1:w1:s1:u1", "a2:w2:s1:u1", "a3:w3:s1:u1", "c1:w4:s2:u1"),
			limit:      4, b: bounds{webhook: 4, session: 2, user: 8},
			want: []string{"a1", "c1", "a2"},
		},
		{
			name:       "user bound over its sessions, with one in flight",
			candidates: due("a1:w1:s1:u1", "c1:w2:s2:u1", "e1:w3:s3:u1", "b1:w9:s9:u9"),
			inflight:   []owner{{"w7", "s7", "u1"}},
			limit:      4, b: bounds{webhook: 4, session: 4, user: 3},
			want: []string{"b1", "a1", "c1"},
		},
		{
			name:       "webhook bound skips to the session's next webhook",
			candidates: due("a1:w1:s1:u1", "a2:w1:s1:u1", "a3:w2:s1:u1"),
			inflight:   []owner{{"w1", "s1", "u1"}},
			limit:      3, b: bounds{webhook: 1, session: 8, user: 8},
			want: []string{"a3"},
		},
		{
			name:       "limit",
			candidates: due("a1:w1:s1:u1", "b1:w9:s9:u9", "a2:w1:s1:u1"),
			limit:      1, b: wide,
			want: []string{"a1"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := newLoad()
			for _, o := range tt.inflight {
				l.add(o, 1)
			}
			var got []string
			for _, c := range fairOrder(tt.candidates, tt.limit, l, tt.b) {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("picked %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDefaultBounds: zero takes the defaults, a session has room for a
// dead webhook's bound and as much again, and nothing exceeds the slots.
func TestDefaultBounds(t *testing.T) {
	for _, tt := range []struct {
		concurrency int
		in, want    bounds
	}{
		{32, bounds{}, bounds{webhook: 4, session: 8, user: 16}},
		{4, bounds{webhook: 2}, bounds{webhook: 2, session: 4, user: 4}},
		{1, bounds{}, bounds{webhook: 1, session: 1, user: 1}},
		{64, bounds{webhook: 2, session: 3, user: 5}, bounds{webhook: 2, session: 3, user: 5}},
		{8, bounds{webhook: 20, session: 20, user: 20}, bounds{webhook: 8, session: 8, user: 8}},
	} {
		if got := defaultBounds(tt.concurrency, tt.in); got != tt.want {
			t.Errorf("defaultBounds(%d, %+v) = %+v, want %+v", tt.concurrency, tt.in, got, tt.want)
		}
	}
}
