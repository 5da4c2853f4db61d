package fairpool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// script drives a pool step by step: asks are made in the order written
// (each waits until its asker is queued or served), and after each step the
// grants so far are compared with what the step wants.
type script struct {
	t       *testing.T
	p       *Pool
	mu      sync.Mutex
	granted []string          // labels, in the order they were served
	leases  map[string]*Lease // by label
	errs    map[string]error  // by label, for the asks that failed
	cancels map[string]context.CancelFunc
	done    map[string]chan struct{}
}

func newScript(t *testing.T, size int) *script {
	return &script{t: t, p: New(size), leases: map[string]*Lease{}, errs: map[string]error{},
		cancels: map[string]context.CancelFunc{}, done: map[string]chan struct{}{}}
}

// ask is label's request (its tenant is the label's letters before the
// digits: "A1" is tenant A's), made with Acquire, or TryAcquire when try.
func (s *script) ask(label string, try bool) {
	s.t.Helper()
	tenant := strings.TrimRight(label, "0123456789")
	ctx, cancel := context.WithCancel(WithTenant(s.t.Context(), tenant))
	s.cancels[label] = cancel
	done := make(chan struct{})
	s.done[label] = done
	before := s.p.asked(tenant)
	go func() {
		defer close(done)
		acquire := s.p.Acquire
		if try {
			acquire = s.p.TryAcquire
		}
		l, err := acquire(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.errs[label] = err
			return
		}
		s.granted = append(s.granted, label)
		s.leases[label] = l
	}()
	// Wait until the ask is queued, served or answered.
	deadline := time.Now().Add(5 * time.Second)
	for s.p.asked(tenant) == before {
		select {
		case <-done:
			return
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: the ask was never queued", label)
		}
		time.Sleep(time.Millisecond)
	}
}

// asked is how many slots tenant holds or waits for.
func (p *Pool) asked(tenant string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tenants[tenant]; t != nil {
		return t.held + len(t.waiting)
	}
	return 0
}

// held is a copy of the leases served so far, by label.
func (s *script) held() map[string]*Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.leases)
}

func (s *script) release(label string) {
	s.t.Helper()
	s.mu.Lock()
	l := s.leases[label]
	s.mu.Unlock()
	if l == nil {
		s.t.Fatalf("release %s: it holds no slot", label)
	}
	l.Release()
}

// want waits until the grants are want, in that order.
func (s *script) want(step string, want []string) {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		got := slices.Clone(s.granted)
		s.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) || time.Now().After(deadline) {
			s.t.Fatalf("after %s: served %v, want %v", step, got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPoolOrder: free slots go to whoever asks; while they are taken, a
// slot given back goes to the waiting tenant holding the fewest, then to
// the one served longest ago, first come first served within a tenant.
func TestPoolOrder(t *testing.T) {
	type step struct {
		op     string   // "ask A1", "try B1", "release A1", "cancel B2", "reclaimed A1", "busy B2"
		served []string // the asks it lets through
	}
	cases := []struct {
		name  string
		size  int
		steps []step
	}{
		{"free slots to whoever asks", 2, []step{
			{"ask A1", []string{"A1"}},
			{"ask A2", []string{"A2"}},
			{"ask A3", nil},
			{"release A1", []string{"A3"}},
		}},
		{"a flood keeps another tenant waiting for the runs in progress only", 2, []step{
			{"ask A1", []string{"A1"}},
			{"ask A2", []string{"A2"}},
			{"ask A3", nil}, {"ask A4", nil}, {"ask A5", nil}, {"ask A6", nil},
			{"ask B1", nil},
			{"release A1", []string{"B1"}},
			{"release A2", []string{"A3"}},
			{"ask B2", nil},
			{"release B1", []string{"B2"}}, // A holds 1, B none
			{"release A3", []string{"A4"}},
		}},
		{"round robin between tenants holding alike", 1, []step{
			{"ask A1", []string{"A1"}},
			{"ask A2", nil}, {"ask A3", nil}, {"ask B1", nil}, {"ask B2", nil}, {"ask C1", nil},
			{"release A1", []string{"B1"}}, // newcomers first, in their order
			{"release B1", []string{"C1"}},
			{"release C1", []string{"A2"}}, // then the one served longest ago
			{"release A2", []string{"B2"}},
			{"release B2", []string{"A3"}},
		}},
		{"a tenant holds at most its share while others wait", 4, []step{
			{"ask A1", []string{"A1"}}, {"ask A2", []string{"A2"}}, {"ask A3", []string{"A3"}}, {"ask A4", []string{"A4"}},
			{"ask A5", nil}, {"ask A6", nil},
			{"ask B1", nil}, {"ask B2", nil}, {"ask B3", nil},
			{"release A1", []string{"B1"}},
			{"release A2", []string{"B2"}},
			{"release A3", []string{"A5"}}, // A holds 1, B 2
			{"release B1", []string{"B3"}}, // 2 and 1
		}},
		{"a waiter gone leaves its place", 1, []step{
			{"ask A1", []string{"A1"}},
			{"ask B1", nil}, {"ask C1", nil},
			{"cancel B1", nil},
			{"release A1", []string{"C1"}},
		}},
		{"try: a free slot", 2, []step{
			{"try A1", []string{"A1"}},
			{"try B1", []string{"B1"}},
		}},
		{"try: taken back from the tenant over its share", 4, []step{
			{"ask A1", []string{"A1"}}, {"ask A2", []string{"A2"}}, {"ask A3", []string{"A3"}}, {"try A4", []string{"A4"}},
			{"try B1", nil},
			{"reclaimed A4", nil}, // the newest
			{"release A4", []string{"B1"}},
			{"try B2", nil},
			{"reclaimed A3", nil},
			{"release A3", []string{"B2"}},
		}},
		{"try: busy within shares", 2, []step{
			{"ask A1", []string{"A1"}}, {"ask B1", []string{"B1"}},
			{"try B2", nil}, {"busy B2", nil}, // B holds its share, 1
			{"try C1", nil}, {"busy C1", nil}, // nobody holds more than 1
			{"release A1", nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScript(t, c.size)
			var served, reclaimed []string
			for _, st := range c.steps {
				op, label, _ := strings.Cut(st.op, " ")
				switch op {
				case "ask", "try":
					s.ask(label, op == "try")
				case "release":
					s.release(label)
				case "cancel":
					s.cancels[label]()
					<-s.done[label]
				case "reclaimed":
					s.mu.Lock()
					l := s.leases[label]
					s.mu.Unlock()
					if cause := context.Cause(l.Context()); !errors.Is(cause, ErrReclaimed) {
						t.Fatalf("%s: its context ended with %v, want ErrReclaimed", label, cause)
					}
					reclaimed = append(reclaimed, label)
					for other, l := range s.held() {
						if !slices.Contains(reclaimed, other) && errors.Is(context.Cause(l.Context()), ErrReclaimed) {
							t.Fatalf("%s was taken back too", other)
						}
					}
				case "busy":
					<-s.done[label]
					if err := s.errs[label]; !errors.Is(err, ErrBusy) {
						t.Fatalf("%s: %v, want ErrBusy", label, err)
					}
				}
				served = append(served, st.served...)
				s.want(st.op, served)
			}
			for _, l := range s.held() {
				l.Release()
			}
		})
	}
}

// TestTryAcquireAnswers: what a TryAcquire refused or served by a taking
// back sees, and what the run it took from sees.
func TestTryAcquireAnswers(t *testing.T) {
	p := New(2)
	a := WithTenant(t.Context(), "A")
	b := WithTenant(t.Context(), "B")
	a1, err := p.TryAcquire(a)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := p.TryAcquire(a)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := p.TryAcquire(a); !errors.Is(err, ErrBusy) || time.Since(start) > time.Second {
		t.Fatalf("A over its own slots: %v after %s, want ErrBusy at once", err, time.Since(start))
	}
	got := make(chan error, 1)
	var b1 *Lease
	go func() {
		var err error
		b1, err = p.TryAcquire(b)
		got <- err
	}()
	select {
	case <-a2.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("A's newest run was not asked to give its slot back")
	}
	if cause := context.Cause(a2.Context()); !errors.Is(cause, ErrReclaimed) {
		t.Fatalf("the cancelled run's cause is %v, want ErrReclaimed", cause)
	}
	if a1.Context().Err() != nil {
		t.Fatal("A's older run was cancelled too")
	}
	a2.Release()
	if err := <-got; err != nil {
		t.Fatalf("B: %v", err)
	}
	// B within its share of 1, A at its own: both refused at once.
	if _, err := p.TryAcquire(b); !errors.Is(err, ErrBusy) {
		t.Fatalf("B past its share: %v, want ErrBusy", err)
	}
	if _, err := p.TryAcquire(a); !errors.Is(err, ErrBusy) {
		t.Fatalf("A at its share: %v, want ErrBusy", err)
	}
	// A waiter whose context ends is answered with its cause.
	ctx, cancel := context.WithTimeoutCause(a, 20*time.Millisecond, errors.New("gave up"))
	defer cancel()
	if _, err := p.Acquire(ctx); err == nil || err.Error() != "gave up" {
		t.Fatalf("a waiter past its deadline: %v, want its cause", err)
	}
	b1.Release()
	b1.Release() // a second call gives nothing more back
	a1.Release()
	if p.inUse != 0 || len(p.tenants) != 0 {
		t.Fatalf("after every release: %d in use, tenants %v", p.inUse, p.tenants)
	}
}

// TestPoolUnderLoad: many tenants asking and giving back at once never
// hold more slots than there are, every ask is served or answered, and
// nothing is left behind.
func TestPoolUnderLoad(t *testing.T) {
	const size = 3
	p := New(size)
	var inUse, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			ctx := WithTenant(t.Context(), fmt.Sprint("T", i%5))
			if i%7 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Millisecond)
				defer cancel()
			}
			acquire := p.Acquire
			if i%3 == 0 {
				acquire = p.TryAcquire
			}
			l, err := acquire(ctx)
			if err != nil {
				return
			}
			n := inUse.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-l.Context().Done():
			case <-time.After(time.Millisecond):
			}
			inUse.Add(-1)
			l.Release()
		})
	}
	wg.Wait()
	if m := most.Load(); m > size {
		t.Fatalf("%d slots held at once, of %d", m, size)
	}
	if p.inUse != 0 || len(p.tenants) != 0 {
		t.Fatalf("left behind: %d in use, tenants %v", p.inUse, p.tenants)
	}
}
