package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// newBus returns a bus over a fresh log; on PostgreSQL it follows the log,
// as the server's does there.
func newBus(t testing.TB, sessions []string, opts BusOptions) *Bus {
	t.Helper()
	db := openDB(t, sessions...)
	opts.Follow = dbtest.Postgres(t)
	b := NewBus(newLog(t, db, LogOptions{}), opts)
	t.Cleanup(b.Close)
	return b
}

// publishN publishes n events of kind to a session, one append each.
func publishN(t testing.TB, b *Bus, session string, kind Kind, n int) []Envelope {
	t.Helper()
	var out []Envelope
	for i := range n {
		envs, err := b.Publish(context.Background(), session, []New{{Kind: kind, Data: data(fmt.Sprintf(`{"i":%d}`, i))}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, envs...)
	}
	return out
}

// next reads one event, failing the test on an error or after 10 s.
func next(t testing.TB, s *Subscription) Envelope {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	return e
}

// countingObserver counts subscriptions as metrics would.
type countingObserver struct {
	mu             sync.Mutex
	started, ended int
}

func (o *countingObserver) SubscriberStarted() { o.mu.Lock(); o.started++; o.mu.Unlock() }
func (o *countingObserver) SubscriberEnded()   { o.mu.Lock(); o.ended++; o.mu.Unlock() }
func (o *countingObserver) counts() (int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.started, o.ended
}

// TestBusReplayAndLiveUnderLoad: while 4 publishers append to a session
// (and another session gets appends too), subscribers join at every point,
// some from a cursor in the log, some live only; each receives every event
// of the session after its start exactly once, in seq order, up to the
// last one.
func TestBusReplayAndLiveUnderLoad(t *testing.T) {
	const publishers, perPublisher = 4, 150
	const total = publishers * perPublisher
	b := newBus(t, []string{"s1", "s2"}, BusOptions{Buffer: total * 2})
	progress := make(chan int64, total) // seqs of s1 as they commit
	var pub sync.WaitGroup
	for p := range publishers {
		pub.Go(func() {
			for i := range perPublisher {
				envs, err := b.Publish(context.Background(), "s1", []New{{Kind: MessagesUpdate, Data: data(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))}})
				if err != nil {
					t.Error(err)
					return
				}
				progress <- envs[0].Seq
				if _, err := b.Publish(context.Background(), "s2", []New{{Kind: MessagesUpdate}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	type result struct {
		from int64 // -1: live only
		seqs []int64
		err  error
	}
	results := make(chan result, 2*total)
	var subs, subscribed sync.WaitGroup
	seen, launched := 0, 0
	for seq := range progress {
		seen++
		if seen%15 != 0 && seen != 1 {
			if seen == total {
				break
			}
			continue
		}
		// Every 15th commit: one subscriber from a cursor some way back,
		// one live only.
		for _, from := range []int64{seq / 2, -1} {
			launched++
			subscribed.Add(1)
			subs.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var cur *Cursor
				if from >= 0 {
					cur = &Cursor{Seq: from}
				}
				s, err := b.Subscribe(ctx, "s1", nil, cur)
				subscribed.Done()
				if err != nil {
					results <- result{from: from, err: err}
					return
				}
				defer s.Close()
				r := result{from: from}
				for {
					e, err := s.Next(ctx)
					if err != nil {
						r.err = err
						break
					}
					if e.SessionID != "s1" {
						r.err = fmt.Errorf("event of session %s", e.SessionID)
						break
					}
					r.seqs = append(r.seqs, e.Seq)
					if e.Seq == total+1 {
						break
					}
				}
				results <- r
			})
		}
		if seen == total {
			break
		}
	}
	pub.Wait()
	// The last event, after every subscriber has subscribed (not only
	// been launched: one subscribing after it would wait for it forever):
	// each reads up to it.
	subscribed.Wait()
	if envs := publishN(t, b, "s1", ChatsUpsert, 1); envs[0].Seq != total+1 {
		t.Fatalf("the last event has seq %d, want %d", envs[0].Seq, total+1)
	}
	subs.Wait()
	close(results)
	n := 0
	for r := range results {
		n++
		if r.err != nil {
			t.Errorf("subscriber from %d: %v", r.from, r.err)
			continue
		}
		if len(r.seqs) == 0 {
			t.Errorf("subscriber from %d got nothing", r.from)
			continue
		}
		first := r.seqs[0]
		if r.from >= 0 && first != r.from+1 {
			t.Errorf("subscriber from %d: first seq %d", r.from, first)
		}
		for i, s := range r.seqs {
			if s != first+int64(i) {
				t.Errorf("subscriber from %d: seq %d at position %d: a gap or a duplicate (%v…)", r.from, s, i, r.seqs[max(0, i-3):i+1])
				break
			}
		}
		if last := r.seqs[len(r.seqs)-1]; last != total+1 {
			t.Errorf("subscriber from %d ended at seq %d, want %d", r.from, last, total+1)
		}
	}
	if n != launched || n < 80 {
		t.Errorf("%d subscribers reported of %d launched, want at least 80", n, launched)
	}
	if got := b.Subscribers(); got != 0 {
		t.Errorf("%d subscribers still counted after every one closed", got)
	}
}

// TestBusReplayOverflow: live events that overflow the buffer while the
// subscriber still reads the log are read from the log instead: nothing is
// lost, nothing doubled, and the subscriber is not cut.
func TestBusReplayOverflow(t *testing.T) {
	b := newBus(t, []string{"s1"}, BusOptions{Buffer: 2})
	stored := publishN(t, b, "s1", MessagesUpdate, 600) // more than two replay pages
	s, err := b.Subscribe(context.Background(), "s1", nil, &Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		next(t, s) // inside the first page: still replaying
	}
	live := publishN(t, b, "s1", MessagesUpdate, 10) // overflows the buffer of 2
	want := int64(len(stored) + len(live))
	for seq := int64(4); seq <= want; seq++ {
		if e := next(t, s); e.Seq != seq {
			t.Fatalf("seq %d, want %d", e.Seq, seq)
		}
	}
	// Live again: the next event arrives through the queue.
	publishN(t, b, "s1", MessagesUpdate, 1)
	if e := next(t, s); e.Seq != want+1 {
		t.Fatalf("live seq %d, want %d", e.Seq, want+1)
	}
}

// TestBusSlowSubscriberCut: a subscriber that stops reading is cut off
// once its buffer is full, with the last event it received; another
// subscriber of the same session keeps receiving every event, and no
// publish waits for either.
func TestBusSlowSubscriberCut(t *testing.T) {
	obs := &countingObserver{}
	b := newBus(t, []string{"s1"}, BusOptions{Buffer: 8, Observer: obs})
	ctx := context.Background()
	fast, err := b.Subscribe(ctx, "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slow, err := b.Subscribe(ctx, "s1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if b.Subscribers() != 2 {
		t.Fatalf("%d subscribers, want 2", b.Subscribers())
	}
	var envs []Envelope
	for i := range 30 {
		envs = append(envs, publishN(t, b, "s1", MessagesUpdate, 1)...)
		if e := next(t, fast); e.ID != envs[i].ID {
			t.Fatalf("fast subscriber got %s (seq %d), want %s", e.ID, e.Seq, envs[i].ID)
		}
		if i < 3 {
			if e := next(t, slow); e.ID != envs[i].ID {
				t.Fatalf("slow subscriber got %s, want %s", e.ID, envs[i].ID)
			}
		}
	}
	_, err = slow.Next(ctx)
	var lag *LaggedError
	if !errors.As(err, &lag) {
		t.Fatalf("slow subscriber: %v, want a LaggedError", err)
	}
	if lag.LastID != envs[2].ID {
		t.Errorf("cut naming %q, want the last delivered %s", lag.LastID, envs[2].ID)
	}
	t.Logf("cut: %v", err)
	if b.Subscribers() != 1 {
		t.Errorf("%d subscribers after the cut, want 1", b.Subscribers())
	}
	if started, ended := obs.counts(); started != 2 || ended != 1 {
		t.Errorf("observer saw %d started, %d ended; want 2, 1", started, ended)
	}
	// Resuming after the named id gives exactly what was missed.
	again, err := b.Subscribe(ctx, "s1", nil, &Cursor{Seq: envs[2].Seq, ID: lag.LastID})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for _, want := range envs[3:] {
		if e := next(t, again); e.ID != want.ID {
			t.Fatalf("resumed subscriber got seq %d, want %d", e.Seq, want.Seq)
		}
	}
}

// TestBusKinds: a subscription with kinds gets only those, from the log and
// live.
func TestBusKinds(t *testing.T) {
	b := newBus(t, []string{"s1"}, BusOptions{})
	ctx := context.Background()
	publish := func(kinds ...Kind) []Envelope {
		var evs []New
		for _, k := range kinds {
			evs = append(evs, New{Kind: k})
		}
		envs, err := b.Publish(ctx, "s1", evs)
		if err != nil {
			t.Fatal(err)
		}
		return envs
	}
	before := publish(MessagesUpdate, ChatsUpsert, ConnectionUpdate, InboundMessageUpsert)
	s, err := b.Subscribe(ctx, "s1", []Kind{ChatsUpsert, InboundMessageUpsert}, &Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := publish(PresenceUpdate, InboundMessageUpsert, ChatsUpsert, MessagesUpdate)
	for _, want := range []Envelope{before[1], before[3], after[1], after[2]} {
		if e := next(t, s); e.ID != want.ID || e.Kind != want.Kind {
			t.Fatalf("got %s %s (seq %d), want %s %s (seq %d)", e.Kind, e.ID, e.Seq, want.Kind, want.ID, want.Seq)
		}
	}
}

// TestBusEnds: a subscription ends when its context ends, when its session
// is deleted, when it is closed and when the bus closes: a consumer waiting
// in Next gets what was queued, then the reason; the bus forgets it.
func TestBusEnds(t *testing.T) {
	tests := []struct {
		name string
		end  func(b *Bus, cancel context.CancelFunc, s *Subscription)
		want error
	}{
		{"context", func(_ *Bus, cancel context.CancelFunc, _ *Subscription) { cancel() }, context.Canceled},
		{"session deleted", func(b *Bus, _ context.CancelFunc, _ *Subscription) { b.EndSession("s1") }, ErrSessionEnded},
		{"closed", func(_ *Bus, _ context.CancelFunc, s *Subscription) { s.Close() }, ErrSubscriptionClosed},
		{"bus closed", func(b *Bus, _ context.CancelFunc, _ *Subscription) { b.Close() }, ErrBusClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBus(t, []string{"s1", "s2"}, BusOptions{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := b.Subscribe(ctx, "s1", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			other, err := b.Subscribe(context.Background(), "s2", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			sent := publishN(t, b, "s1", MessagesUpdate, 2)
			if e := next(t, s); e.ID != sent[0].ID {
				t.Fatalf("got seq %d, want 1", e.Seq)
			}
			got := make(chan error, 1)
			go func() {
				// Reads the queued event, then waits.
				e, err := s.Next(context.Background())
				if err != nil || e.ID != sent[1].ID {
					got <- fmt.Errorf("queued event: %+v, %v", e, err)
					return
				}
				_, err = s.Next(context.Background())
				got <- err
			}()
			tt.end(b, cancel, s)
			select {
			case err := <-got:
				if !errors.Is(err, tt.want) {
					t.Fatalf("ended with %v, want %v", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Next did not return after the end")
			}
			want := 1 // the other session's
			if tt.name == "bus closed" {
				want = 0
				if _, err := b.Subscribe(context.Background(), "s1", nil, nil); !errors.Is(err, ErrBusClosed) {
					t.Errorf("subscribe after Close: %v", err)
				}
			}
			if n := b.Subscribers(); n != want {
				t.Errorf("%d subscribers counted, want %d", n, want)
			}
		})
	}
}

// kindCounter counts the events committed by kind, as metrics would.
type kindCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *kindCounter) EventStored(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[kind]++
}

// TestBusCountsStored: the Stored observer is told every event committed,
// by kind, whatever published it and in whichever session, and told an
// event found already stored under its key once, when it was stored.
func TestBusCountsStored(t *testing.T) {
	ctx := context.Background()
	stored := &kindCounter{}
	b := newBus(t, []string{"s1", "s2"}, BusOptions{Stored: stored})
	msg := func(key string) New {
		return New{Kind: InboundMessageUpsert, Data: data(`{"id":"` + key + `"}`), Key: "in/" + key}
	}
	appends := []struct {
		session string
		evs     []New
	}{
		{"s1", []New{msg("A"), {Kind: ChatsUpsert}}},
		{"s1", []New{msg("A"), msg("B"), msg("B")}}, // A stored already, B once
		{"s2", []New{msg("A")}},                     // the same key in another session
		{"s1", []New{{Kind: WebhookTest, Webhooks: []string{}}}},
	}
	for _, a := range appends {
		if _, err := b.Publish(ctx, a.session, a.evs); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int{string(InboundMessageUpsert): 3, string(ChatsUpsert): 1, string(WebhookTest): 1}
	stored.mu.Lock()
	defer stored.mu.Unlock()
	if fmt.Sprint(stored.counts) != fmt.Sprint(want) {
		t.Errorf("told %v, want %v", stored.counts, want)
	}
}
