package messaging

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// observed keeps what the Observer is told.
type observed struct {
	mu   sync.Mutex
	seen [][2]string
}

func (o *observed) Sent(kind, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, [2]string{kind, outcome})
}

func (o *observed) take() [][2]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := o.seen
	o.seen = nil
	return out
}

// switchSender sends, or fails with err when it is set.
func switchSender(err error) whatsapp.Runner {
	return sendsWith(failingSender{err}, func(whatsapp.Outgoing) (whatsapp.Sent, error) {
		if err != nil {
			return whatsapp.Sent{}, err
		}
		return whatsapp.Sent{ID: "3EB0SENT", Timestamp: time.Now()}, nil
	})
}

// TestObserver: every send ends in one observation, by kind and outcome:
// sent, scheduled (and again when the scheduler makes it), or the
// failure's code in lower case; a type nobody knows is "unknown".
func TestObserver(t *testing.T) {
	ctx := context.Background()
	scheduled := 5
	tests := []struct {
		name    string
		req     Request
		sendErr error
		due     bool // run the scheduler after the request
		want    [][2]string
	}{
		{"sent", Request{Type: TypeText, Text: "hi"}, nil, false, [][2]string{{"text", "sent"}}},
		{"not connected", Request{Type: TypeText, Text: "hi"}, fault.New(fault.NotConnected, "not connected"), false,
			[][2]string{{"text", "not_connected"}}},
		{"invalid", Request{Type: TypeText, Text: " "}, nil, false, [][2]string{{"text", "bad_user_input"}}},
		{"unknown type", Request{Type: "hologram"}, nil, false, [][2]string{{"unknown", "internal"}}},
		{"scheduled, then sent", Request{Type: TypeText, Text: "later", Delay: &scheduled}, nil, true,
			[][2]string{{"text", "scheduled"}, {"text", "sent"}}},
		{"scheduled, then refused", Request{Type: TypeText, Text: "later", Delay: &scheduled},
			fault.New(fault.WhatsAppRefused, "refused"), true,
			[][2]string{{"text", "scheduled"}, {"text", "whatsapp_refused"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := sessionDB(t)
			var mu sync.Mutex
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			obs := &observed{}
			s := New(Options{DB: db, Sender: switchSender(tt.sendErr), Publisher: &events{}, Now: clock, Observer: obs})

			tt.req.Number = "491701234567"
			_, _ = s.Send(ctx, "s1", tt.req)
			if tt.due {
				mu.Lock()
				now = now.Add(time.Minute)
				mu.Unlock()
				if _, err := s.runDue(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := obs.take(); !slices.Equal(got, tt.want) {
				t.Errorf("observed %v, want %v", got, tt.want)
			}
		})
	}
}
