package whatsapp

import (
	"errors"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestPresence: a contact's chat states reach the session without asking;
// its availability only once the session subscribed to it.
func TestPresence(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	// A message first: the device learns the contact's LID with it.
	id, err := e.net.SendText(peer, phone, "hi")
	if err != nil {
		t.Fatal(err)
	}
	e.event("s1", KindInboundMessage, id)
	contact := map[string]any{
		"chat": phoneJID(peer).String(), "participant": phoneJID(peer).String(),
		"participantPhone": peer, "participantLid": e.lidOf(peer),
	}
	me := phoneJID(phone)

	// next waits for the first presence.update from the n-th event on.
	next := func(n int) published {
		t.Helper()
		var ev published
		e.waitUntil("a presence.update", func() bool {
			for _, x := range e.pub.events("s1")[n:] {
				if x.Kind == KindPresenceUpdate {
					ev = x
					return true
				}
			}
			return false
		})
		return ev
	}

	t.Run("chat state", func(t *testing.T) {
		for _, tt := range []struct {
			state string
			want  map[string]any
		}{
			{"composing", map[string]any{"presence": "composing", "media": nil, "lastSeen": nil}},
			{"recording", map[string]any{"presence": "recording", "media": "audio"}},
			{"paused", map[string]any{"presence": "paused", "media": nil}},
		} {
			n := len(e.pub.events("s1"))
			if err := e.net.SendPresence(peer, me, tt.state); err != nil {
				t.Fatal(err)
			}
			ev := next(n)
			wantData(t, tt.state, ev.Data, contact)
			wantData(t, tt.state, ev.Data, tt.want)
		}
	})

	t.Run("availability", func(t *testing.T) {
		// WhatsApp sends availability only to subscribers.
		if err := e.net.SendPresence(peer, me, "available"); !errors.Is(err, wafake.ErrNoSubscriber) {
			t.Fatalf("availability before subscribing: %v, want ErrNoSubscriber", err)
		}
		n := len(e.pub.events("s1"))
		if err := m.SubscribePresence(ctx, "s1", phoneJID(peer)); err != nil {
			t.Fatal(err)
		}
		// On subscribing WhatsApp tells the current presence.
		ev := next(n)
		wantData(t, "available", ev.Data, contact)
		wantData(t, "available", ev.Data, map[string]any{"presence": "available", "lastSeen": nil, "media": nil})

		n = len(e.pub.events("s1"))
		if err := e.net.SendPresence(peer, me, "unavailable"); err != nil {
			t.Fatal(err)
		}
		ev = next(n)
		wantData(t, "unavailable", ev.Data, contact)
		wantData(t, "unavailable", ev.Data, map[string]any{"presence": "unavailable"})
		seen, err := time.Parse(time.RFC3339, ev.Data["lastSeen"].(string))
		if err != nil || time.Since(seen) > time.Minute {
			t.Errorf("lastSeen %v (%v), want a recent time", ev.Data["lastSeen"], err)
		}
	})

	t.Run("subscribe refusals", func(t *testing.T) {
		// A group is refused before it reaches the adapter
		// (internal/messaging's rule).
		wantFault(t, m.SubscribePresence(ctx, "nope", phoneJID(peer)), fault.NotConnected)
	})
	e.settle(st)
}
