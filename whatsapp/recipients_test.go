package whatsapp

import (
	"fmt"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
)

// TestRecipientMemory: an answer is remembered for recipientTTL and no
// longer, a new answer renews it, and past maxRecipients numbers the
// oldest answers are forgotten first.
func TestRecipientMemory(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	jid := func(n string) types.JID { return types.NewJID(n, types.DefaultUserServer) }
	var r recipientMemory
	if _, ok := r.lookup("491701", t0); ok {
		t.Fatal("the zero memory knows a number")
	}
	r.remember("491701", jid("5591701"), t0)
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{t0, true},
		{t0.Add(recipientTTL - time.Second), true},
		{t0.Add(recipientTTL), false},
		{t0.Add(-time.Second), false}, // a clock that went back does not extend an answer
	} {
		got, ok := r.lookup("491701", c.at)
		if ok != c.want || (ok && got != jid("5591701")) {
			t.Errorf("at %s: %s, %v; want the canonical JID: %v", c.at.Sub(t0), got, ok, c.want)
		}
	}
	r.remember("491701", jid("5591701"), t0.Add(recipientTTL))
	if _, ok := r.lookup("491701", t0.Add(recipientTTL+time.Minute)); !ok {
		t.Error("a renewed answer is forgotten")
	}

	var full recipientMemory
	for i := range maxRecipients + 2 {
		n := fmt.Sprint(4900000 + i)
		full.remember(n, jid(n), t0)
	}
	full.remember("4900002", jid("4900002"), t0) // renewed: now the newest
	full.remember("extra", jid("extra"), t0)
	for n, want := range map[string]bool{"4900000": false, "4900001": false, "4900002": true, "4900003": false, "4900004": true, "extra": true} {
		if _, ok := full.lookup(n, t0); ok != want {
			t.Errorf("%s remembered: %v, want %v", n, ok, want)
		}
	}
	if len(full.known) != maxRecipients || len(full.order) != maxRecipients {
		t.Errorf("%d answers, %d in order; want %d", len(full.known), len(full.order), maxRecipients)
	}
}
