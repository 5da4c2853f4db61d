package sandbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// maxTimelock bounds a reach-out timelock a control puts on an account:
// WhatsApp's last a few days at most; a month is plenty to try one.
const maxTimelock = 30 * 24 * time.Hour

// ReachoutTimelock puts the account of linked device Device under a
// reach-out timelock for Seconds (0 lifts it): the network tells its
// devices, as WhatsApp does, and refuses with error 463 its messages to
// contacts new to it while the timelock lasts.
type ReachoutTimelock struct {
	Device  string `json:"device"`
	Seconds int    `json:"seconds"`
}

func (ReachoutTimelock) control() Control[ReachoutTimelock, Done] {
	return Control[ReachoutTimelock, Done]{
		name: "reachout-timelock",
		check: func(q ReachoutTimelock) error {
			if err := checkDevice("device", q.Device); err != nil {
				return err
			}
			if q.Seconds < 0 || time.Duration(q.Seconds)*time.Second > maxTimelock {
				return fault.InvalidField("seconds", "seconds must be from 0 (lifts the timelock) to %d (30 days), got %d", int(maxTimelock/time.Second), q.Seconds)
			}
			return nil
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q ReachoutTimelock) (Done, error) {
			device := checked(q.Device)
			return Done{}, refusal(n.ReachoutTimelock(device.User, time.Duration(q.Seconds)*time.Second), device.User)
		},
	}
}
