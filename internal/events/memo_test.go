package events

import (
	"context"
	"testing"
)

// TestMemo: a key is derived once and shared; a derivation that fails is
// not kept; a nil Memo derives every time.
func TestMemo(t *testing.T) {
	calls := 0
	derive := func(ok bool) func() ([]byte, bool) {
		return func() ([]byte, bool) {
			calls++
			return []byte("x"), ok
		}
	}
	var m Memo
	for range 3 {
		if b, ok := m.Load("k", derive(true)); !ok || string(b) != "x" {
			t.Fatalf("Load = %q, %v", b, ok)
		}
	}
	if calls != 1 {
		t.Errorf("derived %d times, want once", calls)
	}
	calls = 0
	for range 2 {
		if _, ok := m.Load("bad", derive(false)); ok {
			t.Fatal("a failed derivation reported ok")
		}
	}
	if calls != 2 {
		t.Errorf("a failed derivation was kept: derived %d times, want 2", calls)
	}
	calls = 0
	var none *Memo
	none.Load("k", derive(true))
	none.Load("k", derive(true))
	if calls != 2 {
		t.Errorf("nil Memo derived %d times, want 2", calls)
	}
}

// TestFanOutSharesMemo: the live subscribers of an event get one Memo for
// it, a Memo per event; the publisher's envelopes and what a subscription
// reads from the log have none.
func TestFanOutSharesMemo(t *testing.T) {
	bus := newBus(t, []string{"s1"}, BusOptions{})
	ctx := context.Background()
	a, err := bus.Subscribe(ctx, "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := bus.Subscribe(ctx, "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// A subscription reads the log until it finds nothing more there: the
	// first event ends that.
	if _, err := bus.Publish(ctx, "s1", []New{{Kind: InboundMessageUpsert, Data: data(`{"n":0}`)}}); err != nil {
		t.Fatal(err)
	}
	next(t, a)
	next(t, b)
	got, err := bus.Publish(ctx, "s1", []New{{Kind: InboundMessageUpsert, Data: data(`{"n":1}`)}, {Kind: InboundMessageUpsert, Data: data(`{"n":2}`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.Memo != nil {
			t.Fatalf("the publisher's envelope %d has a Memo", e.Seq)
		}
	}
	a1, a2, b1, b2 := next(t, a), next(t, a), next(t, b), next(t, b)
	if a1.Memo == nil || a1.Memo != b1.Memo || a2.Memo != b2.Memo || a1.Memo == a2.Memo {
		t.Fatalf("memos %p %p / %p %p: want one per event, shared", a1.Memo, a2.Memo, b1.Memo, b2.Memo)
	}
	replay, err := bus.Subscribe(ctx, "s1", nil, &Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	if e := next(t, replay); e.Memo != nil {
		t.Fatalf("the replayed envelope %d has a Memo", e.Seq)
	}
}
