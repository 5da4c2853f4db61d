package wafake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// The reach-out timelock, as WhatsApp applies it (issue 32): an account
// under it may not message contacts new to it — accounts it never
// exchanged a message with — until it ends; a send to one is acked with
// error 463, which whatsmeow returns as ErrServerReturnedError. WhatsApp
// tells the account's linked devices with a mex notification, which
// whatsmeow emits as events.NotifyAccountReachoutTimelock (notification.go
// handleMexNotification).

const (
	// errReachout is WhatsApp's ack error for a send the timelock refuses.
	errReachout = "463"
	// reachoutOp is the mex operation of the notification.
	reachoutOp = "NotifyAccountReachoutTimelock"
	// reachoutEnforcement is the enforcement_type the network gives.
	reachoutEnforcement = "REACHOUT_TIMELOCK"
)

// ReachoutTimelock puts the account under a reach-out timelock for d from
// now (0 lifts it) and tells its linked devices.
func (n *Network) ReachoutTimelock(phone string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("wafake: a timelock of %s: the duration must not be negative", d)
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var until time.Time
	if d > 0 {
		until = time.Now().Add(d).Truncate(time.Second).Add(time.Second) // whole seconds, never early
	}
	a.state.reachoutUntil = until
	comps := linkedLocked(a, nil)
	n.mu.Unlock()
	body := map[string]any{"enforcement_type": reachoutEnforcement, "is_active": d > 0}
	if d > 0 {
		body["time_enforcement_ends"] = strconv.FormatInt(until.Unix(), 10)
	}
	data, err := json.Marshal(map[string]any{"data": map[string]any{"xwa2_notify_account_reachout_timelock": body}})
	if err != nil {
		return err
	}
	n.notify(comps, types.ServerJID, "mex", []waBinary.Node{{Tag: "update", Attrs: waBinary.Attrs{"op_name": reachoutOp}, Content: data}})
	return nil
}

// reachoutRefusesLocked tells whether the timelock of from refuses a
// message to the account to: from is under one and never exchanged a
// message with to. n.mu must be held.
func (n *Network) reachoutRefusesLocked(from, to *account) bool {
	if from == nil || to == nil || from == to || !time.Now().Before(from.state.reachoutUntil) {
		return false
	}
	return !from.state.contacted[to.phone]
}

// contactedLocked records that a and b exchanged a message: neither is a
// new contact of the other any more. n.mu must be held.
func contactedLocked(a, b *account) {
	if a == nil || b == nil || a == b {
		return
	}
	for _, pair := range [][2]*account{{a, b}, {b, a}} {
		if pair[0].state.contacted == nil {
			pair[0].state.contacted = map[string]bool{}
		}
		pair[0].state.contacted[pair[1].phone] = true
	}
}
