package whatsapp

import (
	"context"
	"errors"
	"log/slog"
)

// ErrMoved ends a Watch whose session this process released (Release): the
// process that holds the session now is the one to ask.
var ErrMoved = errors.New("whatsapp: the session moved to another process")

// Release stops running a session this process no longer holds (in a
// cluster, another process leases it now): its connection closes and it is
// forgotten, and nothing is persisted or published about it, because the
// process that holds it now reports its state, and a late DISCONNECTED
// from here would overwrite that. Stanzas that arrive meanwhile are not
// acknowledged: WhatsApp sends them again to the next connection. Its
// watchers end with ErrMoved. A later call loads it anew from the store.
func (m *Manager) Release(sessionID string) {
	s, _ := m.forget(sessionID, true) // closed: Close stops it
	if s == nil {
		return
	}
	defer m.wg.Done()
	defer s.opMu.Unlock()
	s.mu.Lock()
	cli, stop := s.detachLocked()
	s.mu.Unlock()
	if cli != nil {
		cli.Disconnect()
	}
	if stop != nil {
		stop()
	}
	s.log.Info("session released to another process")
}

// Adopt starts a session this process has just come to hold: what the
// manager held of it from an earlier lease is stale and dropped, the record
// is read anew, and a linked device logs in (as Restore does). still is
// asked under the session's operation lock, which Release takes too: when
// the lease was lost again meanwhile, Adopt leaves the session alone, and a
// Release that comes after it finds the client Adopt started.
func (m *Manager) Adopt(ctx context.Context, sessionID string, still func() bool) error {
	m.Release(sessionID)
	s, err := m.lockSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if !still() {
		s.opMu.Unlock()
		m.Release(sessionID)
		return nil
	}
	defer s.opMu.Unlock()
	return m.restoreLocked(ctx, s)
}

// AdoptEach is Adopt for several sessions, a few at a time, telling done
// the outcome of each (its index in sessionIDs) as it comes.
func (m *Manager) AdoptEach(ctx context.Context, sessionIDs []string, still func(id string) bool, done func(i int, err error)) {
	forEach(len(sessionIDs), func(i int) {
		if ctx.Err() != nil {
			done(i, ctx.Err())
			return
		}
		id := sessionIDs[i]
		done(i, m.Adopt(ctx, id, func() bool { return still(id) }))
	})
}

// StoredState is what a session's persisted record says when no process
// runs it: a status a process left behind reads DISCONNECTED, as when the
// manager loads it.
func StoredState(rec StatusRecord) SessionState {
	return newSession("", slog.New(slog.DiscardHandler), rec).st.public()
}
