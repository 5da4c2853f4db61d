package whatsapp

// A storage failure is never acknowledged (issue 22).
//
// whatsmeow keeps a device's Signal state in the device store. When a store
// call fails while it decrypts a message, it sends a retry receipt and
// acknowledges the stanza ("TODO this probably isn't supposed to ack",
// message.go decryptMessages): WhatsApp then drops it and the text is lost.
// It leaves the stanza unacknowledged only when the error is a cancellation.
// So the stores a client decrypts with are wrapped here: their errors also
// wrap context.Canceled, and the stanza stays queued at WhatsApp for the
// next login; no patch of whatsmeow. The first failure also takes the
// session down at once and brings it back once the store can be written
// (recoverStore), so that next login comes as soon as the store works.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

const (
	storeProbeEvery   = time.Second      // how often a failed store is probed
	storeProbeTimeout = 5 * time.Second  // one probe
	storeProbeFor     = 30 * time.Minute // then the session stays DISCONNECTED
)

// reasonStoreFailed is the reason of a session taken down by a store failure.
const reasonStoreFailed = "the device store failed: reconnecting once it can be written"

// errStoreFailed marks the errors of a wrapped store; it is not itself a
// cause, the wrapped error is.
var errStoreFailed = errors.New("device store failure")

// storeGuard is what the wrapped stores of one client share.
type storeGuard struct {
	// fault, when set (tests only), is asked before every store call; its
	// error fails the call as the store would.
	fault func() error
	// failed is called on every failure of a store call whose context was
	// not itself ended.
	failed  func(error)
	tripped atomic.Bool // set by the first failure: one recovery per client
}

// check fails the call when the test's fault says so.
func (g *storeGuard) check() error {
	if g.fault == nil {
		return nil
	}
	if err := g.fault(); err != nil {
		return g.wrap(context.Background(), err)
	}
	return nil
}

// wrap makes err a cancellation for whatsmeow (errors.Is(err,
// context.Canceled)) that still says what failed, and reports it.
func (g *storeGuard) wrap(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, errStoreFailed) {
		return err
	}
	if ctx.Err() == nil && g.failed != nil {
		g.failed(err)
	}
	return fmt.Errorf("%w (%w): %w", errStoreFailed, context.Canceled, err)
}

// guard runs a store call behind g.
func guard(ctx context.Context, g *storeGuard, call func() error) error {
	if err := g.check(); err != nil {
		return err
	}
	return g.wrap(ctx, call())
}

// guard1 is guard for a call with a result.
func guard1[T any](ctx context.Context, g *storeGuard, call func() (T, error)) (T, error) {
	if err := g.check(); err != nil {
		var zero T
		return zero, err
	}
	v, err := call()
	return v, g.wrap(ctx, err)
}

// guardStores wraps the stores of dev that whatsmeow uses while it
// decrypts a message (message.go decryptMessages, store/signal.go): the
// identities, sessions, prekeys, sender keys, message secrets, the buffer
// of decrypted events and the LID map.
func guardStores(dev *store.Device, g *storeGuard) {
	dev.Identities = guardedIdentities{dev.Identities, g}
	dev.Sessions = guardedSessions{dev.Sessions, g}
	dev.PreKeys = guardedPreKeys{dev.PreKeys, g}
	dev.SenderKeys = guardedSenderKeys{dev.SenderKeys, g}
	dev.MsgSecrets = guardedMsgSecrets{dev.MsgSecrets, g}
	dev.EventBuffer = guardedEventBuffer{dev.EventBuffer, g}
	dev.LIDs = guardedLIDs{dev.LIDs, g}
}

// installStoreGuard wraps the stores of the linked device of cli, which
// runs for s: a failure takes s down until the store can be written.
func (m *Manager) installStoreGuard(s *session, cli *whatsmeow.Client, dev *store.Device) {
	g := &storeGuard{fault: m.storeFault}
	g.failed = func(err error) {
		m.obs.StoreFailed()
		if g.tripped.CompareAndSwap(false, true) {
			m.storeFailed(s, cli, err)
		}
	}
	guardStores(dev, g)
}

// storeFailed starts the recovery of s from a failure of its client's
// store, unless the manager is closed.
func (m *Manager) storeFailed(s *session, cli *whatsmeow.Client, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.storeKeepUp {
		return
	}
	m.wg.Add(1)
	go m.recoverStore(s, cli, err)
}

// recoverStore disconnects cli (if still the client of s) at once, then
// probes the device store every storeProbeEvery with a write and connects
// s again as soon as one succeeds; WhatsApp then re-sends what was left
// unacknowledged. It stops when the manager closes, when s was given
// another state meanwhile (an operation, a deletion) or after storeProbeFor.
func (m *Manager) recoverStore(s *session, cli *whatsmeow.Client, cause error) {
	defer m.wg.Done()
	var stop context.CancelFunc
	m.change(s, cli, func(s *session) bool {
		_, stop = s.detachLocked()
		s.st.status, s.st.reason, s.st.keepaliveLost = StatusConnecting, reasonStoreFailed, false
		return true
	})
	if stop == nil {
		return // no longer the session's client
	}
	s.log.Error("the device store failed: disconnected until it can be written", "err", cause)
	cli.Disconnect()
	stop()
	jid := cli.Store.GetJID()
	tick := time.NewTicker(storeProbeEvery)
	defer tick.Stop()
	deadline := time.Now().Add(storeProbeFor)
	for attempt := 1; ; attempt++ {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		done, err := m.probeAndReconnect(s, jid, time.Now().After(deadline))
		if done {
			return
		}
		if attempt == 1 || attempt%60 == 0 {
			s.log.Warn("the device store still fails", "attempts", attempt, "err", err)
		}
	}
}

// probeAndReconnect writes the device of s back to the store and connects
// s when that works. It reports done when s no longer waits for the store
// (reconnected, or taken over meanwhile); with last set a failed probe ends
// the wait with s DISCONNECTED.
func (m *Manager) probeAndReconnect(s *session, jid types.JID, last bool) (bool, error) {
	if m.isClosed() {
		return true, nil
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	waiting := !s.deleted && s.cli == nil && s.st.status == StatusConnecting && s.st.reason == reasonStoreFailed
	s.mu.Unlock()
	if !waiting {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(m.ctx, storeProbeTimeout)
	defer cancel()
	err := m.probeStore(ctx, jid)
	if err == nil {
		s.log.Info("the device store works again: reconnecting")
		if err := m.connect(m.ctx, s, true); err != nil {
			s.log.Warn("reconnecting after the device store failed", "err", err)
		}
		return true, nil
	}
	if last {
		m.change(s, nil, func(s *session) bool {
			if s.cli != nil || s.st.reason != reasonStoreFailed {
				return false
			}
			s.st.end(StatusDisconnected, fmt.Sprintf("the device store failed for %s: connect again", storeProbeFor))
			return true
		})
		return true, err
	}
	return false, err
}

// probeStore writes the device's row back as it is stored: a write the
// store refuses while it is down or full.
func (m *Manager) probeStore(ctx context.Context, jid types.JID) error {
	if m.storeFault != nil {
		if err := m.storeFault(); err != nil {
			return err
		}
	}
	dev, err := m.store.GetDevice(ctx, jid)
	if err != nil {
		return fmt.Errorf("read device %s: %w", jid, err)
	}
	if dev == nil {
		return nil // deleted: connect finds it missing and says so
	}
	if err := dev.Save(ctx); err != nil {
		return fmt.Errorf("write device %s: %w", jid, err)
	}
	return nil
}
