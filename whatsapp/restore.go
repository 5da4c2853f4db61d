package whatsapp

// Restoring the sessions at start: the manager's policy for the linked
// sessions a previous process left behind.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// LinkedLister lists the sessions with a linked device: the session table
// (sessions.StatusStore).
type LinkedLister interface {
	Linked(ctx context.Context) ([]string, error)
}

// RestoreLinked starts every linked session, a few at a time; each then
// reconnects by itself. It is meant to run in the background while the
// server already answers (/readyz says it waits for it). A session that
// fails is logged with its session_id and left DISCONNECTED (a connect
// starts it again): it stops neither the others nor the server; one
// deleted since the list was read is no failure. It reports whether it ran
// to its end, that is whether ctx did not end first.
func (m *Manager) RestoreLinked(ctx context.Context, linked LinkedLister) bool {
	start := time.Now()
	ids, err := linked.Linked(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("restoring the linked sessions failed: none was started", "err", err)
		}
		return ctx.Err() == nil
	}
	var failed atomic.Int64
	m.RestoreEach(ctx, ids, func(i int, err error) {
		switch {
		case err == nil, ctx.Err() != nil:
		case fault.CodeOf(err) == fault.NotFound: // deleted since the list was read
			m.log.Debug("the session was deleted before it was restored", "session_id", ids[i])
		default:
			failed.Add(1)
			m.log.Error("restoring the session failed", "session_id", ids[i], "err", err)
		}
	})
	if ctx.Err() != nil {
		m.log.Info("restoring the linked sessions stopped: the server is stopping")
		return false
	}
	m.log.Info("linked sessions started", "sessions", len(ids), "failed", failed.Load(), "took", time.Since(start).Round(time.Millisecond))
	return true
}

// Restore loads the given sessions and reconnects those with a linked
// device, a few at a time (RestoreLinked, and the sessions refused as
// outdated once a newer version is known).
// Sessions without a device are loaded as DISCONNECTED (or LOGGED_OUT) and
// a status left behind by a previous process is corrected. Errors of single
// sessions are joined; the others are restored regardless.
func (m *Manager) Restore(ctx context.Context, sessionIDs []string) error {
	errs := make([]error, len(sessionIDs))
	m.RestoreEach(ctx, sessionIDs, func(i int, err error) { errs[i] = err })
	return errors.Join(errs...)
}

// RestoreEach is Restore telling done the outcome of each session (its
// index in sessionIDs), as it comes: a caller logs each failure with its
// session. done may be called from several goroutines at once.
func (m *Manager) RestoreEach(ctx context.Context, sessionIDs []string, done func(i int, err error)) {
	forEach(len(sessionIDs), func(i int) {
		if ctx.Err() != nil {
			done(i, ctx.Err())
			return
		}
		done(i, m.restore(ctx, sessionIDs[i]))
	})
}

func (m *Manager) restore(ctx context.Context, id string) error {
	s, err := m.lockSession(ctx, id)
	if err != nil {
		return err
	}
	defer s.opMu.Unlock()
	return m.restoreLocked(ctx, s)
}

// restoreLocked is restore with s.opMu held.
func (m *Manager) restoreLocked(ctx context.Context, s *session) error {
	s.mu.Lock()
	linked, running, status := !s.st.jid.IsEmpty() && s.st.status != StatusLoggedOut, s.cli != nil, s.st.status
	s.mu.Unlock()
	if linked && !running {
		return m.connect(ctx, s, true)
	}
	s.log.Debug("restore: nothing to start", "linked", linked, "running", running, "status", status)
	m.change(s, nil, func(*session) bool { return true }) // persists and publishes a corrected stale status
	return nil
}
