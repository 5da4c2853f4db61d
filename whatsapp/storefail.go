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
// next login; no patch of whatsmeow.
//
// That next login comes at once. Any failure to handle a stanza (a device
// store call, the store of our events or statuses, a write past its
// deadline, or anything else a handler reports) takes the session down at
// once and brings it back once a write probe succeeds (recoverFrom):
// WhatsApp then sends again what was left unacknowledged.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

const (
	storeProbeEvery   = time.Second      // how often a failed store is probed
	storeProbeTimeout = 5 * time.Second  // one probe
	storeProbeFor     = 30 * time.Minute // then the session stays DISCONNECTED
	// A session that fails again within recoveryCalm of its last recovery
	// waits longer before its first probe (1 s, 2 s, 4 s … recoveryMaxWait):
	// a stanza that fails every time must not make it reconnect in a loop.
	recoveryCalm    = 2 * time.Minute
	recoveryMaxWait = time.Minute
)

// The reasons of a session taken down to recover (its connection.update
// says which).
const (
	reasonStoreFailed    = "the device store failed: reconnecting once it can be written"
	reasonEventsFailed   = "storing what WhatsApp sent failed: reconnecting once the database can be written"
	reasonHandlingFailed = "handling what WhatsApp sent failed: reconnecting so that WhatsApp sends it again"
)

// recovering reports whether reason is one of a session waiting in
// recoverFrom for a probe.
func recovering(reason string) bool {
	switch reason {
	case reasonStoreFailed, reasonEventsFailed, reasonHandlingFailed:
		return true
	}
	return false
}

// WriteProbe tells whether the database can be written right now
// (storage.Probe): a session taken down by a failure reconnects only once
// it can, and the device store's own write succeeded too.
type WriteProbe interface {
	Check(ctx context.Context) error
}

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
	failed func(error)
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
		m.recoverFrom(s, cli, reasonStoreFailed, err)
	}
	guardStores(dev, g)
	limitRetryPrune(dev)
}

// storeFailed counts a failure of our own store (events, statuses). The
// handler that met it decides what follows (handleEvent): some retry in
// place (history.go), and a failure that stands takes the session down.
func (m *Manager) storeFailed(s *session) {
	m.obs.StoreFailed()
	s.storeFailures.Add(1)
}

// guardOnSave guards the stores of a device being paired as soon as they
// exist: sqlstore makes them in PutDevice when whatsmeow saves the
// pairing, in its pairing goroutine and before it answers WhatsApp, so
// nothing can use them before they are guarded (and nothing else runs
// beside that write: guarding them later, from the PairSuccess handler,
// raced with the login that follows the pairing).
type guardOnSave struct {
	store.DeviceContainer
	guard func(*store.Device)
	once  sync.Once
}

func (c *guardOnSave) PutDevice(ctx context.Context, dev *store.Device) error {
	if err := c.DeviceContainer.PutDevice(ctx, dev); err != nil {
		return err
	}
	c.once.Do(func() { c.guard(dev) })
	return nil
}

// recoverFrom starts the recovery of s from a failure of its client cli
// (one per client: the first failure's reason is the one shown), unless
// the manager is closed or cli is no longer the session's client.
func (m *Manager) recoverFrom(s *session, cli *whatsmeow.Client, reason string, cause error) {
	m.mu.Lock()
	if m.closed || m.storeKeepUp {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	s.mu.Lock()
	if s.cli != cli || s.recovering == cli {
		s.mu.Unlock()
		m.wg.Done()
		return
	}
	s.recovering = cli
	now := time.Now()
	if now.Sub(s.lastRecovery) > recoveryCalm {
		s.recoveryStreak = 0
	}
	s.recoveryStreak++
	s.lastRecovery = now
	wait := recoveryWait(s.recoveryStreak)
	s.mu.Unlock()
	go m.recoverStore(s, cli, reason, cause, wait)
}

// recoveryWait is how long the n-th of recoveries close together waits
// before its first probe.
func recoveryWait(n int) time.Duration {
	return min(storeProbeEvery<<min(max(n-1, 0), 16), recoveryMaxWait)
}

// recoverStore disconnects cli (if still the client of s) at once, then,
// after wait, probes the store every storeProbeEvery with a write and
// connects s again as soon as one succeeds; WhatsApp then re-sends what was
// left unacknowledged. It stops when the manager closes, when s was given
// another state meanwhile (an operation, a deletion) or after storeProbeFor.
func (m *Manager) recoverStore(s *session, cli *whatsmeow.Client, reason string, cause error, wait time.Duration) {
	defer m.wg.Done()
	var stop context.CancelFunc
	m.change(s, cli, func(s *session) bool {
		_, stop = s.detachLocked()
		s.st.status, s.st.reason, s.st.keepaliveLost = StatusConnecting, reason, false
		return true
	})
	if stop == nil {
		return // no longer the session's client
	}
	s.log.Error("disconnected to recover: "+reason, "err", cause, "probe_in", wait)
	cli.Disconnect()
	stop()
	jid := cli.Store.GetJID()
	first := time.NewTimer(wait)
	defer first.Stop()
	select {
	case <-m.ctx.Done():
		return
	case <-first.C:
	}
	tick := time.NewTicker(storeProbeEvery)
	defer tick.Stop()
	deadline := time.Now().Add(storeProbeFor)
	for attempt := 1; ; attempt++ {
		done, err := m.probeAndReconnect(s, jid, reason, time.Now().After(deadline))
		if done {
			return
		}
		if attempt == 1 || attempt%60 == 0 {
			s.log.Warn("the store still cannot be written", "attempts", attempt, "err", err)
		}
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// probeAndReconnect probes the store of s with writes and connects s when
// they work. It reports done when s no longer waits (reconnected, or taken
// over meanwhile); with last set a failed probe ends the wait with s
// DISCONNECTED.
func (m *Manager) probeAndReconnect(s *session, jid types.JID, reason string, last bool) (bool, error) {
	if m.isClosed() {
		return true, nil
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	s.mu.Lock()
	waiting := !s.deleted && s.cli == nil && s.st.status == StatusConnecting && s.st.reason == reason
	s.mu.Unlock()
	if !waiting {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(m.ctx, storeProbeTimeout)
	defer cancel()
	err := m.probeStore(ctx, jid)
	if err == nil {
		s.log.Info("the store can be written: reconnecting")
		if err := m.connect(m.ctx, s, true); err != nil {
			s.log.Warn("reconnecting after a failure to store failed", "err", err)
		}
		return true, nil
	}
	if last {
		m.change(s, nil, func(s *session) bool {
			if s.cli != nil || s.st.reason != reason {
				return false
			}
			s.st.end(StatusDisconnected, fmt.Sprintf("the store could not be written for %s: connect again", storeProbeFor))
			return true
		})
		return true, err
	}
	return false, err
}

// probeStore writes the device's row back as it is stored, and asks the
// database's write probe when there is one: writes the store refuses while
// it is down or full.
func (m *Manager) probeStore(ctx context.Context, jid types.JID) error {
	if m.storeFault != nil {
		if err := m.storeFault(); err != nil {
			return err
		}
	}
	if m.probe != nil {
		if err := m.probe.Check(ctx); err != nil {
			return fmt.Errorf("write probe: %w", err)
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
