package messaging

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent/scheduledsend"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/sessionsettings"
	"github.com/wagraph/wagraph/whatsapp"
)

// fixedSettings are the settings of every session.
type fixedSettings struct{ set sessionsettings.Settings }

func (f fixedSettings) Get(context.Context, string) (sessionsettings.Settings, error) {
	return f.set, nil
}

func rate(t *testing.T, text string) *sessionsettings.Rate {
	t.Helper()
	r, err := sessionsettings.ParseRate("sendRate", text)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// pacedRunner is a CONNECTED session whose sends are recorded in order,
// or refused NOT_CONNECTED while down; presences are recorded too.
type pacedRunner struct {
	mu    sync.Mutex
	down  bool
	texts []string
	ops   []string
}

func (p *pacedRunner) Run(_ context.Context, _ string, c whatsapp.Call) error {
	if answerConnected(c) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch c.Op {
	case whatsapp.OpSend().Name():
		if p.down {
			return fault.New(fault.NotConnected, "session s1 is not connected")
		}
		out := c.Request.(whatsapp.Outgoing)
		p.texts = append(p.texts, out.Text)
		p.ops = append(p.ops, "send "+out.Text)
		*c.Result.(*whatsapp.Sent) = whatsapp.Sent{ID: out.ID, Timestamp: time.Now()}
	case whatsapp.OpSendPresence().Name():
		p.ops = append(p.ops, "presence "+c.Request.(whatsapp.Presence).State)
	}
	return nil
}

func (p *pacedRunner) sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.texts...)
}

// TestSendRateQueue: with a rate of 2/s the first send goes at once and
// the next ones are queued half a second apart, in the order they were
// accepted; a send accepted while others wait queues behind them; a wait
// for the session moves the whole queue so the order holds; everything
// goes out once, in order.
func TestSendRateQueue(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	wa := &pacedRunner{}
	s := New(Options{DB: db, Sender: wa, Now: clock, Loader: fakeLoader{}, Preparer: fakePreparer{},
		Settings: fixedSettings{sessionsettings.Settings{SendRate: rate(t, "2/s")}}})
	start := clock()
	send := func(text string) Result {
		t.Helper()
		res, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: peerNumber, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	for i := 1; i <= 5; i++ {
		res := send(fmt.Sprint(i))
		switch {
		case i == 1 && (res.Timestamp == nil || res.ScheduledAt != nil):
			t.Fatalf("the first send within the rate: %+v, want sent now", res)
		case i > 1 && (res.ScheduledAt == nil || !res.ScheduledAt.Equal(start.Add(time.Duration(i-1)*500*time.Millisecond))):
			t.Errorf("send %d: %+v, want scheduled at +%s", i, res, time.Duration(i-1)*500*time.Millisecond)
		}
	}
	for range 2 {
		advance(500 * time.Millisecond)
		if _, err := s.runDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(wa.sent()); got != "[1 2 3]" {
		t.Errorf("after 1 s: %s, want [1 2 3]", got)
	}
	// Accepted now, while 4 and 5 wait: behind them, at the next slot.
	if res := send("6"); res.ScheduledAt == nil || !res.ScheduledAt.Equal(start.Add(2500*time.Millisecond)) {
		t.Errorf("send 6: %+v, want scheduled at +2.5s behind the queue", res)
	}

	wa.mu.Lock()
	wa.down = true
	wa.mu.Unlock()
	advance(600 * time.Millisecond) // 4 is due
	if _, err := s.runDue(ctx); err != nil {
		t.Fatal(err)
	}
	rows := db.ScheduledSend.Query().Where(scheduledsend.StateEQ(scheduledsend.StatePending)).
		Order(scheduledsend.ByDueAt()).AllX(ctx)
	if len(rows) != 3 {
		t.Fatalf("%d sends queued, want 3", len(rows))
	}
	for i, r := range rows[1:] {
		if !r.DueAt.After(rows[i].DueAt) || r.DueAt.Sub(rows[i].DueAt) != 500*time.Millisecond {
			t.Errorf("after the wait, queued %s at %s follows %s at %s: the spacing is lost", r.ID, r.DueAt, rows[i].ID, rows[i].DueAt)
		}
	}
	if !rows[0].DueAt.After(clock()) {
		t.Errorf("the first queued send is due at %s, not after now %s", rows[0].DueAt, clock())
	}

	// Connected again: the queue goes on from now, still spaced.
	if err := s.resumePaced(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	rows = db.ScheduledSend.Query().Where(scheduledsend.StateEQ(scheduledsend.StatePending)).
		Order(scheduledsend.ByDueAt()).AllX(ctx)
	if !rows[0].DueAt.Equal(clock()) || rows[2].DueAt.Sub(rows[0].DueAt) != time.Second {
		t.Errorf("after the session came back the queue is due at %s, %s, %s; want from now %s, 500ms apart",
			rows[0].DueAt, rows[1].DueAt, rows[2].DueAt, clock())
	}

	wa.mu.Lock()
	wa.down = false
	wa.mu.Unlock()
	// A minute later (the process was down, say) all three are overdue:
	// one goes, the next ones are spaced again rather than sent at once.
	advance(time.Minute)
	if _, err := s.runDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(wa.sent()); got != "[1 2 3 4]" {
		t.Errorf("after a minute away: %s, want only 4 sent at once", got)
	}
	rows = db.ScheduledSend.Query().Where(scheduledsend.StateEQ(scheduledsend.StatePending)).
		Order(scheduledsend.ByDueAt()).AllX(ctx)
	if len(rows) != 2 || !rows[0].DueAt.Equal(clock().Add(500*time.Millisecond)) {
		t.Errorf("after a minute away the queue is %v, want 5 due 500ms after 4 went", rows)
	}
	for range 4 {
		advance(500 * time.Millisecond)
		if _, err := s.runDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(wa.sent()); got != "[1 2 3 4 5 6]" {
		t.Errorf("sent %s, want [1 2 3 4 5 6]: each once, in order", got)
	}
	// Later the rate allows a send at once again.
	advance(time.Minute)
	if res := send("7"); res.Timestamp == nil {
		t.Errorf("send 7 after the queue emptied: %+v, want sent now", res)
	}
}

// TestSendJitter: each queued send waits its rate's interval plus at most
// the jitter, and the queue keeps its order.
func TestSendJitter(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(Options{DB: db, Sender: &pacedRunner{}, Now: func() time.Time { return now }, Loader: fakeLoader{}, Preparer: fakePreparer{},
		Settings: fixedSettings{sessionsettings.Settings{SendRate: rate(t, "10/s"), SendJitter: time.Second}}})
	prev := now
	spread := false
	for i := range 20 {
		res, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: peerNumber, Text: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		gap := res.ScheduledAt.Sub(prev)
		if gap < 100*time.Millisecond || gap > 1100*time.Millisecond {
			t.Errorf("send %d due %s after the one before, want from 100ms to 1.1s", i, gap)
		}
		spread = spread || gap > 150*time.Millisecond
		prev = *res.ScheduledAt
	}
	if !spread {
		t.Error("no queued send waited longer than its rate: the jitter is not applied")
	}
}

// TestSimulateTyping: a text is preceded by COMPOSING and PAUSED; other
// kinds are not.
func TestSimulateTyping(t *testing.T) {
	ctx := context.Background()
	wa := &pacedRunner{}
	s := New(Options{DB: sessionDB(t), Sender: wa, Loader: fakeLoader{}, Preparer: fakePreparer{},
		Settings: fixedSettings{sessionsettings.Settings{SimulateTyping: true}}})
	began := time.Now()
	if _, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: peerNumber, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if took, want := time.Since(began), sessionsettings.TypingTime(2); took < want {
		t.Errorf("the text went after %s, want typing for %s first", took, want)
	}
	if got := fmt.Sprint(wa.ops); got != "[presence composing presence paused send hi]" {
		t.Errorf("ops %s, want typing, pause, then the text", got)
	}
}

// perSession answers a CONNECTED session; s1's presences wait for
// release, every send is recorded with its session.
type perSession struct {
	release chan struct{}
	mu      sync.Mutex
	sent    []string
}

func (p *perSession) Run(_ context.Context, sessionID string, c whatsapp.Call) error {
	if answerConnected(c) {
		return nil
	}
	switch c.Op {
	case whatsapp.OpSendPresence().Name():
		if sessionID == "s1" {
			<-p.release
		}
	case whatsapp.OpSend().Name():
		out := c.Request.(whatsapp.Outgoing)
		p.mu.Lock()
		p.sent = append(p.sent, sessionID+":"+out.Text)
		p.mu.Unlock()
		*c.Result.(*whatsapp.Sent) = whatsapp.Sent{ID: out.ID, Timestamp: time.Now()}
	}
	return nil
}

// TestScheduledSessionsSideBySide: a session's due send that takes long
// (typed first) does not hold up another session's.
func TestScheduledSessionsSideBySide(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	db.Session.Create().SetID("s2").SetOwnerID("u1").ExecX(ctx)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	wa := &perSession{release: make(chan struct{})}
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := New(Options{DB: db, Sender: wa, Now: clock,
		Settings: fixedSettings{sessionsettings.Settings{SimulateTyping: true}}})
	to, err := whatsapp.ParseJID(peerJID)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2"} { // s1's due first
		if _, err := s.schedule(ctx, id, whatsapp.Outgoing{Type: TypeText, To: to, Text: "later"}, 0); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(time.Second)
		mu.Unlock()
	}
	done := make(chan error, 1)
	go func() { _, err := s.runDue(ctx); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		wa.mu.Lock()
		got := fmt.Sprint(wa.sent)
		wa.mu.Unlock()
		if got == "[s2:later]" {
			break
		}
		if time.Now().After(deadline) {
			close(wa.release)
			t.Fatalf("s2's send waits for s1's typing: sent %s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(wa.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(wa.sent) != "[s2:later s1:later]" {
		t.Errorf("sent %v", wa.sent)
	}
}
