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

// Adopt starts a session this process has just come to hold: a linked
// device logs in (as Restore does). A copy the manager loaded while
// another process held the session is stale (that process may have linked
// it meanwhile) and is read anew. A copy running a client is kept: it was
// started here since the lease was taken (every lease this process loses
// is released first), for instance the pairing a connectSession began
// while the adoption waited its turn. still is asked under the session's
// operation lock, which Release takes too: when the lease was lost again
// meanwhile, Adopt leaves the session alone, and a Release that comes
// after it finds the client Adopt started.
func (m *Manager) Adopt(ctx context.Context, sessionID string, still func() bool) error {
	for reread := false; ; reread = true {
		s, err := m.lockSession(ctx, sessionID)
		if err != nil {
			return err
		}
		if !still() {
			s.opMu.Unlock()
			m.Release(sessionID)
			return nil
		}
		s.mu.Lock()
		running := s.cli != nil
		s.mu.Unlock()
		if running || reread {
			defer s.opMu.Unlock()
			return m.restoreLocked(ctx, s)
		}
		m.dropIdleLocked(s)
		s.opMu.Unlock()
	}
}

// dropIdleLocked forgets s, which runs no client and whose operation lock
// the caller holds, so that the next operation reads its record anew. An
// operation waiting for the lock finds it gone and looks it up again
// (lockSession); a load under way reads again (deletions).
func (m *Manager) dropIdleLocked(s *session) {
	m.mu.Lock()
	if m.sessions[s.id] == s {
		delete(m.sessions, s.id)
		m.deletions++
	}
	m.mu.Unlock()
	s.emitMu.Lock()
	s.mu.Lock()
	s.deleted, s.moved = true, true
	s.notifyLocked()
	s.mu.Unlock()
	s.emitMu.Unlock()
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
