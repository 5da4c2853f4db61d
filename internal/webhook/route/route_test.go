package route_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/webhook/route"
)

func TestOwed(t *testing.T) {
	calls := &ent.Webhook{ID: "w1", SessionID: "s1", Enabled: true, Events: []string{"call", "messages.update"}}
	off := &ent.Webhook{ID: "w2", SessionID: "s1", Enabled: false, Events: []string{"call"}}
	other := &ent.Webhook{ID: "w3", SessionID: "s2", Enabled: true, Events: []string{"call"}}
	none := &ent.Webhook{ID: "w4", SessionID: "s1", Enabled: true, Events: []string{}}
	call := route.Event{SessionID: "s1", Kind: "call", Selectable: true}
	tests := []struct {
		name string
		hook *ent.Webhook
		ev   route.Event
		want bool
	}{
		{"enabled, selected the kind", calls, call, true},
		{"enabled, another kind selected", calls, route.Event{SessionID: "s1", Kind: "presence.update", Selectable: true}, false},
		{"disabled, selected the kind", off, call, false},
		{"selected nothing", none, call, false},
		{"webhook of another session", other, call, false},
		{"a kind no webhook can select", &ent.Webhook{ID: "w5", SessionID: "s1", Enabled: true, Events: []string{"webhook.test"}},
			route.Event{SessionID: "s1", Kind: "webhook.test"}, false},
		{"named: enabled, kind not selected", calls, route.Event{SessionID: "s1", Kind: "presence.update", Selectable: true, Named: []string{"w1"}}, true},
		{"named: disabled", off, route.Event{SessionID: "s1", Kind: "webhook.test", Named: []string{"w2"}}, true},
		{"names another webhook", calls, route.Event{SessionID: "s1", Kind: "call", Selectable: true, Named: []string{"w2"}}, false},
		{"names none (empty, not nil)", calls, route.Event{SessionID: "s1", Kind: "call", Selectable: true, Named: []string{}}, false},
		{"named, of another session", other, route.Event{SessionID: "s1", Kind: "webhook.test", Named: []string{"w3"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := route.Owed(tt.hook, tt.ev); got != tt.want {
				t.Errorf("Owed(%s, %+v) = %v, want %v", tt.hook.ID, tt.ev, got, tt.want)
			}
		})
	}
}

// TestCandidates: the webhooks read for a batch are the enabled ones of its
// sessions and the named ones, enabled or not, with the fields Owed reads.
func TestCandidates(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range []string{"s1", "s2", "s3"} {
		db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	for _, h := range []struct {
		id, session string
		enabled     bool
	}{{"w1", "s1", true}, {"w2", "s1", false}, {"w3", "s1", false}, {"w4", "s2", true}, {"w5", "s3", true}} {
		db.Webhook.Create().SetID(h.id).SetSessionID(h.session).SetURL("https://example.com/" + h.id).
			SetEvents([]string{"call"}).SetHeaders(map[string]string{}).SetSecret("whsec_x").SetEnabled(h.enabled).ExecX(ctx)
	}
	tests := []struct {
		name            string
		sessions, named []string
		want            []string
	}{
		{"enabled only", []string{"s1", "s2"}, nil, []string{"w1", "w4"}},
		{"and the named, enabled or not", []string{"s1"}, []string{"w3"}, []string{"w1", "w3"}},
		{"named of a session not in the batch", []string{"s2"}, []string{"w2"}, []string{"w4"}},
		{"no session", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks, err := route.Candidates(ctx, db.Webhook, tt.sessions, tt.named)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hooks {
				got = append(got, h.ID)
				if h.SessionID == "" || h.Events == nil {
					t.Errorf("%s read without the fields Owed needs: %+v", h.ID, h)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Candidates(%v, %v) = %v, want %v", tt.sessions, tt.named, got, tt.want)
			}
		})
	}
}
