package whatsapp

// WhatsApp's limits on reaching out (surface.md §4, issue 32): WhatsApp
// stops an account that messages too many new contacts too fast (the
// reach-out timelock). It says so with a mex notification (whatsmeow's
// events.NotifyAccountReachoutTimelock) and refuses a send to a contact
// new to the account with error 463 (whatsmeow's ErrServerReturnedError).
// The session keeps what WhatsApp said (LimitStore: it survives a
// restart), tells each change as connection.update with ReasonReachout,
// and a refused send names the limit and its end.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

const (
	// LimitReachoutTimelock is the limit's name: the reason of its
	// connection.update and the start of a refused send's message.
	LimitReachoutTimelock = "reach-out timelock"
	// errReachoutRefused is WhatsApp's error for a send the timelock
	// refuses.
	errReachoutRefused = 463
)

// Limits is what WhatsApp said of the account's limits; zero: it said
// nothing, or lifted it.
type Limits struct {
	// ReachoutTimelockUntil is when the reach-out timelock ends.
	ReachoutTimelockUntil time.Time
}

// Active is l as it stands at now: a timelock that has ended is none.
func (l Limits) Active(now time.Time) Limits {
	if !l.ReachoutTimelockUntil.After(now) {
		l.ReachoutTimelockUntil = time.Time{}
	}
	return l
}

// Payload is l as events and the API show it. WhatsApp gives no quota of
// new contacts that whatsmeow reads at our pin: NewContactQuota stays null.
func (l Limits) Payload() *payload.Limits {
	return &payload.Limits{ReachoutTimelockUntil: payload.At(l.ReachoutTimelockUntil)}
}

// LimitStore keeps each session's Limits (the app's session table).
type LimitStore interface {
	LoadLimits(ctx context.Context, sessionID string) (Limits, error)
	SaveLimits(ctx context.Context, sessionID string, l Limits) error
}

// timelockLimits is what a NotifyAccountReachoutTimelock says.
func timelockLimits(evt *events.NotifyAccountReachoutTimelock) Limits {
	if !evt.IsActive {
		return Limits{}
	}
	return Limits{ReachoutTimelockUntil: evt.TimeEnforcementEnds.Time.UTC()}
}

// handleReachoutTimelock keeps what WhatsApp said of the timelock and,
// when it changed, publishes connection.update with ReasonReachout, the
// session's status and the limits. The limits are saved first: a failure
// to save is a failure to handle (the notification comes again).
func (r *clientRun) handleReachoutTimelock(evt *events.NotifyAccountReachoutTimelock) bool {
	l := timelockLimits(evt)
	r.s.mu.Lock()
	same := r.s.limitsKnown && r.s.limits == l
	r.s.mu.Unlock()
	if same {
		return true
	}
	if r.m.limits != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if err := r.m.limits.SaveLimits(ctx, r.s.id, l); err != nil {
			r.s.log.Error("saving the session's limits failed", "err", err)
			r.m.storeFailed(r.s)
			return false
		}
	}
	r.s.log.Info("WhatsApp changed the account's limits", "limit", LimitReachoutTimelock,
		"enforcement", evt.EnforcementType, "active", evt.IsActive, "until", l.ReachoutTimelockUntil)
	d := &payload.Connection{Reason: LimitReachoutTimelock, Limits: l.Payload()}
	return r.update(func(s *session) bool {
		s.limits, s.limitsKnown = l, true
		c := s.st.connection()
		d.Status, d.QR = string(c.status), payload.Text(c.qr)
		return true
	}, Event{Kind: KindConnectionUpdate, Data: d})
}

// Limits returns what WhatsApp said of the session's limits, as they
// stand now: the session's own when it has heard, else the stored ones.
func (m *Manager) Limits(ctx context.Context, sessionID string) (Limits, error) {
	m.mu.Lock()
	s := m.sessions[sessionID]
	m.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		l, known := s.limits, s.limitsKnown
		s.mu.Unlock()
		if known {
			return l.Active(time.Now()), nil
		}
	}
	if m.limits == nil {
		return Limits{}, nil
	}
	l, err := m.limits.LoadLimits(ctx, sessionID)
	if err != nil {
		return Limits{}, fmt.Errorf("session %s: load limits: %w", sessionID, err)
	}
	return l.Active(time.Now()), nil
}

// limitFault is the refusal of a send WhatsApp refused with code for one
// of its limits, naming the limit and its end; nil for any other code.
func (m *Manager) limitFault(ctx context.Context, s *session, code int, cause error) error {
	if code != errReachoutRefused {
		return nil
	}
	l, err := m.Limits(ctx, s.id)
	if err != nil {
		s.log.Warn("a refused send's limit could not be read", "err", err)
	}
	return reachoutRefusal(l.ReachoutTimelockUntil, cause)
}

// reachoutRefusal is WHATSAPP_REFUSED for a send the reach-out timelock
// refused, which ends at until (zero: WhatsApp did not say).
func reachoutRefusal(until time.Time, cause error) error {
	end := "until WhatsApp lifts it (it did not say when)"
	if !until.IsZero() {
		end = "until " + until.UTC().Format(time.RFC3339)
	}
	return fault.Wrap(cause, fault.WhatsAppRefused,
		"%s: WhatsApp refuses messages from this account to contacts new to it %s (error %d)", LimitReachoutTimelock, end, errReachoutRefused)
}

// RefusedForLimit tells whether err is a send WhatsApp refused for one of
// its limits (a scheduled one then waits for the limit's end, which the
// session's stored limits tell). It reads the fault's code and message, as
// they reach another process of a cluster.
func RefusedForLimit(err error) bool {
	var f *fault.Error
	return errors.As(err, &f) && f.Code == fault.WhatsAppRefused && LimitRefusal(f.Message)
}

// LimitRefusal tells whether message is that of a send refused for one of
// WhatsApp's limits (as a scheduled send's stored last error).
func LimitRefusal(message string) bool {
	return strings.HasPrefix(message, LimitReachoutTimelock+":")
}
