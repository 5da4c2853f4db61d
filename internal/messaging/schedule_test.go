package messaging

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent/scheduledsend"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/whatsapp"
)

// failingSender fails every operation with err.
type failingSender struct{ err error }

func (f failingSender) Run(context.Context, string, whatsapp.Call) error { return f.err }

// sendsWith is a runner of a CONNECTED session whose sends send answers,
// every other operation failing with fail's error.
func sendsWith(fail failingSender, send func(whatsapp.Outgoing) (whatsapp.Sent, error)) whatsapp.Runner {
	return runnerFunc(func(_ context.Context, _ string, c whatsapp.Call) error {
		if answerConnected(c) {
			return nil
		}
		if c.Op != whatsapp.OpSend().Name() {
			return fail.err
		}
		sent, err := send(c.Request.(whatsapp.Outgoing))
		*c.Result.(*whatsapp.Sent) = sent
		return err
	})
}

type runnerFunc func(ctx context.Context, sessionID string, c whatsapp.Call) error

func (f runnerFunc) Run(ctx context.Context, sessionID string, c whatsapp.Call) error {
	return f(ctx, sessionID, c)
}

// events keeps what the scheduler publishes.
type events struct {
	mu  sync.Mutex
	evs []whatsapp.Event
}

func (e *events) Publish(_ context.Context, _ string, ev whatsapp.Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
	return nil
}

// withMsg returns the records of logs whose msg is msg.
func withMsg(logs *logtest.Buffer, msg string) []map[string]any {
	var out []map[string]any
	for _, rec := range logs.Records() {
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// TestScheduledSendFailureLogged: a scheduled send that fails is logged with
// its session, its id and its cause, at warn for a WhatsApp failure and at
// error for an internal one; the reason stored and published for the user
// never carries the cause.
func TestScheduledSendFailureLogged(t *testing.T) {
	cause := errors.New("info query returned status 403: forbidden")
	tests := []struct {
		name       string
		err        error
		level      string
		wantReason string
	}{
		{"WhatsApp refused", fault.Wrap(cause, fault.WhatsAppRefused, "session s1: WhatsApp refused to send the message"), "WARN",
			"session s1: WhatsApp refused to send the message"},
		{"internal", cause, "ERROR", "the send failed (see the server log)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := sessionDB(t)

			var mu sync.Mutex
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			log, logs := logtest.New(nil)
			pub := &events{}
			s := New(Options{DB: db, Sender: failingSender{tt.err}, Publisher: pub, Now: clock,
				Logger: log})

			to, err := whatsapp.ParseJID("491701234567@s.whatsapp.net")
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.schedule(ctx, "s1", whatsapp.Outgoing{Type: "text", To: to, Text: "later"}, 5)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			now = now.Add(time.Minute)
			mu.Unlock()
			if _, err := s.runDue(ctx); err != nil {
				t.Fatal(err)
			}

			lines := withMsg(logs, "scheduled send failed")
			if len(lines) != 1 {
				t.Fatalf("%d log lines about the failed send, want 1: %s", len(lines), logs.String())
			}
			line := lines[0]
			if line["level"] != tt.level || line["session_id"] != "s1" || line["message_id"] != res.MessageID {
				t.Errorf("log line %v, want level %s, session_id s1, message_id %s", line, tt.level, res.MessageID)
			}
			if logged := fmt.Sprint(line["cause"], " ", line["err"]); !strings.Contains(logged, cause.Error()) {
				t.Errorf("log line %v does not carry the cause %q", line, cause)
			}

			row := db.ScheduledSend.GetX(ctx, res.MessageID)
			if row.State != scheduledsend.StateFailed || row.LastError != tt.wantReason {
				t.Errorf("stored %s %q, want failed %q", row.State, row.LastError, tt.wantReason)
			}
			pub.mu.Lock()
			defer pub.mu.Unlock()
			if d, ok := pub.evs[0].Data.(*payload.MessageStatus); len(pub.evs) != 1 || !ok || string(d.Error) != tt.wantReason {
				t.Fatalf("published %+v, want one messages.update with error %q", pub.evs, tt.wantReason)
			}
			if strings.Contains(row.LastError, "403") {
				t.Errorf("the reason %q carries the cause", row.LastError)
			}
		})
	}
}

// limitsAt is a LimitReader whose one session's timelock ends at until.
type limitsAt struct {
	mu    *sync.Mutex
	until *time.Time
}

func (l limitsAt) LoadLimits(context.Context, string) (whatsapp.Limits, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return whatsapp.Limits{ReachoutTimelockUntil: *l.until}, nil
}

// TestScheduledSendHeldForLimit: a scheduled send WhatsApp refuses for
// the reach-out timelock is neither failed nor tried again while the
// limit lasts: it is looked at again with the growing pause (or at the
// limit's end when sooner, never later) and sent once the limit has ended
// — lifted early, or at its end. One refused when WhatsApp gave no end
// waits as for a disconnected session and fails a day after it was due.
func TestScheduledSendHeldForLimit(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	refusal := fault.New(fault.WhatsAppRefused, "%s: WhatsApp refuses messages from this account to contacts new to it until …", whatsapp.LimitReachoutTimelock)
	tests := []struct {
		name  string
		until time.Duration // from start; 0: no end known
		lift  bool          // the limit is lifted after the first refusal
		// steps: the clock's moves (the send is due 5 s after start), and
		// whether a send is tried at each or the row merely looked at.
		steps []time.Duration
		tries []bool
		final scheduledsend.State
	}{
		{"lifted early", time.Hour, true, []time.Duration{5 * time.Second, 5 * time.Second}, []bool{true, true}, scheduledsend.StateSent},
		{"held until its end", time.Minute, false,
			[]time.Duration{5 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 20 * time.Second},
			[]bool{true, false, false, false, true}, scheduledsend.StateSent},
		{"no end known, given up", 0, false, []time.Duration{5 * time.Second, 25 * time.Hour}, []bool{true, true}, scheduledsend.StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := sessionDB(t)
			var mu sync.Mutex
			now := start
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			until := time.Time{}
			if tt.until > 0 {
				until = start.Add(tt.until)
			}
			limitsMu := &sync.Mutex{}
			lifted := false
			var tries int
			send := sendsWith(failingSender{errors.New("unused")}, func(out whatsapp.Outgoing) (whatsapp.Sent, error) {
				tries++
				limitsMu.Lock()
				refused := !lifted && (until.IsZero() || clock().Before(until))
				limitsMu.Unlock()
				if refused {
					return whatsapp.Sent{}, refusal
				}
				return whatsapp.Sent{ID: out.ID, Chat: out.To, Timestamp: clock()}, nil
			})
			log, _ := logtest.New(nil)
			s := New(Options{DB: db, Sender: send, Publisher: &events{}, Now: clock, Logger: log,
				Limits: limitsAt{mu: limitsMu, until: &until}})
			to, _ := whatsapp.ParseJID("491701234567@s.whatsapp.net")
			res, err := s.schedule(ctx, "s1", whatsapp.Outgoing{Type: "text", To: to, Text: "later"}, 5)
			if err != nil {
				t.Fatal(err)
			}
			end := until
			for i, step := range tt.steps {
				mu.Lock()
				now = now.Add(step)
				mu.Unlock()
				before := tries
				if _, err := s.runDue(ctx); err != nil {
					t.Fatal(err)
				}
				if tried := tries > before; tried != tt.tries[i] {
					t.Fatalf("step %d (%s): tried %v, want %v", i, clock().Sub(start), tried, tt.tries[i])
				}
				row := db.ScheduledSend.GetX(ctx, res.MessageID)
				if row.State == scheduledsend.StatePending && !end.IsZero() && !tt.lift && row.DueAt.After(end) {
					t.Fatalf("step %d: held until %v, past the limit's end %v", i, row.DueAt, end)
				}
				if i == 0 && tt.lift {
					limitsMu.Lock()
					until, lifted = time.Time{}, true
					limitsMu.Unlock()
				}
			}
			if row := db.ScheduledSend.GetX(ctx, res.MessageID); row.State != tt.final {
				t.Errorf("finally %s (%q), want %s", row.State, row.LastError, tt.final)
			}
		})
	}
}
