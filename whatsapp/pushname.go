package whatsapp

// The account's profile name on a newly linked device: the phone gives it
// through app state (critical_block) right after linking, fetched by
// whatsmeow on a goroutine of its own once the phone has shared the app
// state key — which may be after the session is CONNECTED. whatsmeow shows
// the account's presence only with a name, so showing it waits, briefly,
// until the device has the name or has fetched the collection it comes in.

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"
)

// nameWait bounds how long showing the account's presence waits for the
// name of a device that has none yet.
const nameWait = 5 * time.Second

// nameSignal is closed once a client's device has its profile name, or has
// fetched the app state that carries it (without one there).
type nameSignal struct {
	once sync.Once
	ch   chan struct{}
}

func newNameSignal(known bool) *nameSignal {
	n := &nameSignal{ch: make(chan struct{})}
	if known {
		n.done()
	}
	return n
}

func (n *nameSignal) done() {
	if n != nil {
		n.once.Do(func() { close(n.ch) })
	}
}

// wait returns once the name is known, nameWait has passed or ctx ends.
func (n *nameSignal) wait(ctx context.Context) {
	if n == nil {
		return
	}
	t := time.NewTimer(nameWait)
	defer t.Stop()
	select {
	case <-n.ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// appStateFetched reports whether dev has fetched critical_block before
// (a device that did has whatever name the phone gave it): read from the
// device store before its client runs.
func (m *Manager) appStateFetched(s *session, dev *store.Device) bool {
	ctx, cancel := context.WithTimeout(m.ctx, storeTimeout)
	defer cancel()
	version, _, err := dev.AppState.GetAppStateVersion(ctx, string(appstate.WAPatchCriticalBlock))
	if err != nil {
		s.log.Warn("reading the device's app state version failed", "err", err)
		return false
	}
	return version > 0
}

// handleAppStateSynced notes the end of a full sync of an app state
// collection: after critical_block's the device has whatever name the
// phone gave it.
func (r *clientRun) handleAppStateSynced(evt *events.AppStateSyncComplete) bool {
	if evt.Name == appstate.WAPatchCriticalBlock {
		r.named.done()
	}
	return true
}

// nameSignalOf is the name signal of the session's current client.
func (s *session) nameSignalOf() *nameSignal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.named
}
