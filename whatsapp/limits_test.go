package whatsapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestTimelockLimits: what a NotifyAccountReachoutTimelock says (its JSON
// as the mex notification carries it, whatsmeow notification.go) is the
// session's limit: its end while active, none once lifted; an ended
// timelock reads as none.
func TestTimelockLimits(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, body string
		now        time.Time
		want       time.Time
	}{
		{"active", `{"enforcement_type":"REACHOUT_TIMELOCK","is_active":true,"time_enforcement_ends":"1795957200"}`, end.Add(-time.Hour), end},
		{"lifted", `{"enforcement_type":"REACHOUT_TIMELOCK","is_active":false}`, end.Add(-time.Hour), time.Time{}},
		{"ended", `{"enforcement_type":"REACHOUT_TIMELOCK","is_active":true,"time_enforcement_ends":"1795957200"}`, end, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evt events.NotifyAccountReachoutTimelock
			if err := json.Unmarshal([]byte(tc.body), &evt); err != nil {
				t.Fatal(err)
			}
			if got := timelockLimits(&evt).Active(tc.now).ReachoutTimelockUntil; !got.Equal(tc.want) {
				t.Errorf("until %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReachoutRefusal: a send refused with 463 is WHATSAPP_REFUSED naming
// the limit and its end (or that WhatsApp did not say it), which
// RefusedForLimit recognises — also from the code and message alone, as
// it reaches another process; nothing else is taken for it.
func TestReachoutRefusal(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	cause := fmt.Errorf("%w %d", whatsmeow.ErrServerReturnedError, errReachoutRefused)
	if serverCode(cause) != errReachoutRefused {
		t.Fatalf("serverCode(%v) = %d", cause, serverCode(cause))
	}
	for _, tc := range []struct {
		name  string
		until time.Time
		says  string
	}{
		{"end known", end, "until 2026-11-29T13:00:00Z"},
		{"end unknown", time.Time{}, "it did not say when"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := reachoutRefusal(tc.until, cause)
			f := fault.From(err)
			if f == nil || f.Code != fault.WhatsAppRefused || !strings.HasPrefix(f.Message, LimitReachoutTimelock+": ") || !strings.Contains(f.Message, tc.says) {
				t.Fatalf("refusal %+v, want WHATSAPP_REFUSED naming %q and %q", f, LimitReachoutTimelock, tc.says)
			}
			if !errors.Is(err, whatsmeow.ErrServerReturnedError) {
				t.Error("the refusal lost its cause")
			}
			if !RefusedForLimit(err) || !RefusedForLimit(&fault.Error{Code: f.Code, Message: f.Message}) || !LimitRefusal(f.Message) {
				t.Error("RefusedForLimit does not recognise the refusal")
			}
		})
	}
	for _, other := range []error{
		fault.New(fault.WhatsAppRefused, "session s: WhatsApp refused to send the message to x (error 479)"),
		fault.New(fault.NotConnected, "%s: not connected", LimitReachoutTimelock),
		errors.New(LimitReachoutTimelock + ": plain"),
	} {
		if RefusedForLimit(other) {
			t.Errorf("RefusedForLimit(%v) = true", other)
		}
	}
}
