package messaging

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/ent/scheduledsend"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/sessionsettings"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// The pace of a session's sends (surface.md §4, sendRate, sendJitter,
// simulateTyping). A send rate spaces sends evenly: the session's row
// keeps the next free slot (next_send_at). A send at or after it, with
// nothing queued, goes at once and moves the slot on by the rate's
// interval; any other is queued durably at the slot (plus a random jitter)
// as a scheduled send marked paced, and the slot moves past it. The
// scheduler makes queued sends like any scheduled one, so they survive a
// restart, and in a cluster the process that runs the session makes them;
// their due times only grow, so they go in the order they were accepted.
// The queue moves as one: on when the session is away (postponePaced),
// back when it connects again (resumePaced), and on again when a send
// fell behind (respace), so neither the order nor the rate is lost.

// Settings reads a session's settings (sessionsettings.Service).
type Settings interface {
	Get(ctx context.Context, sessionID string) (sessionsettings.Settings, error)
}

// settingsOf are the settings of the session: none without a reader.
func (s *Service) settingsOf(ctx context.Context, sessionID string) (sessionsettings.Settings, error) {
	if s.settings == nil {
		return sessionsettings.Settings{}, nil
	}
	set, err := s.settings.Get(ctx, sessionID)
	if err != nil {
		return set, fmt.Errorf("the settings of session %s: %w", sessionID, err)
	}
	return set, nil
}

// pace takes the session's next slot for out, at rate every with jitter:
// queued reports whether out was stored to go later (res says when); when
// it is not, the caller sends it now.
func (s *Service) pace(ctx context.Context, sessionID string, out whatsapp.Outgoing, every, jitter time.Duration) (res Result, queued bool, err error) {
	id := out.ID // reserved by an idempotency key
	if id == "" {
		id = whatsapp.NewMessageID()
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var due time.Time
	err = ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		row, err := tx.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx)
		if err != nil {
			return fmt.Errorf("lock session %s: %w", sessionID, err)
		}
		slot := now
		if row.NextSendAt != nil && row.NextSendAt.After(now) {
			slot = row.NextSendAt.UTC()
		}
		waiting, err := tx.ScheduledSend.Query().Where(scheduledsend.SessionID(sessionID),
			scheduledsend.StateEQ(scheduledsend.StatePending), scheduledsend.Paced(true)).Exist(ctx)
		if err != nil {
			return fmt.Errorf("queued sends of session %s: %w", sessionID, err)
		}
		if !slot.After(now) && !waiting {
			return tx.Session.UpdateOneID(sessionID).SetNextSendAt(now.Add(every)).Exec(ctx)
		}
		queued = true
		if jitter > 0 {
			slot = slot.Add(rand.N(jitter + 1))
		}
		due = slot.Truncate(time.Millisecond)
		payload, data, err := encodeScheduled(out)
		if err != nil {
			return err
		}
		if err := s.storeScheduled(ctx, tx, sessionID, id, out, due, payload, data, true); err != nil {
			return err
		}
		return tx.Session.UpdateOneID(sessionID).SetNextSendAt(due.Add(every)).Exec(ctx)
	})
	if err != nil || !queued {
		return Result{}, false, err
	}
	s.scheduled(ctx, sessionID, id, due)
	return Result{MessageID: id, ScheduledAt: &due}, true, nil
}

// postponePaced waits for a session that is not connected: the queued
// send row and every one queued after it move on together, so that the
// first is due in wait and their order holds, and so does the slot of the
// next send.
func (s *Service) postponePaced(ctx context.Context, row *ent.ScheduledSend, wait time.Duration, cause error) error {
	shift := s.now().UTC().Add(wait).Sub(row.DueAt)
	if shift <= 0 {
		return nil
	}
	return s.shiftPaced(ctx, row.SessionID, row.DueAt, shift, func(u *ent.ScheduledSendUpdateOne, id string) {
		if id == row.ID {
			u.SetAttempts(row.Attempts + 1).SetLastError(cause.Error())
		}
	})
}

// respace keeps the rate after a send of the queue when the next one,
// next, is overdue (its time passed while the process was down or the
// session away): next goes gap after now, the gap it had after the one
// sent, and the queue after it moves with it, rather than all at once.
func (s *Service) respace(ctx context.Context, next *ent.ScheduledSend, gap time.Duration) error {
	shift := s.now().UTC().Add(gap).Sub(next.DueAt)
	if shift <= 0 {
		return nil
	}
	return s.shiftPaced(ctx, next.SessionID, next.DueAt, shift, nil)
}

// shiftPaced moves the session's queued sends due from from on, and the
// slot of its next send, by shift, under the session row's lock; mark,
// when set, adds to each row's update.
func (s *Service) shiftPaced(ctx context.Context, sessionID string, from time.Time, shift time.Duration, mark func(*ent.ScheduledSendUpdateOne, string)) error {
	return ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		sess, err := tx.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx)
		if err != nil {
			return fmt.Errorf("lock session %s: %w", sessionID, err)
		}
		later, err := tx.ScheduledSend.Query().Where(scheduledsend.SessionID(sessionID),
			scheduledsend.StateEQ(scheduledsend.StatePending), scheduledsend.Paced(true),
			scheduledsend.DueAtGTE(from)).All(ctx)
		if err != nil {
			return err
		}
		for _, l := range later {
			u := tx.ScheduledSend.UpdateOne(l).SetDueAt(l.DueAt.Add(shift))
			if mark != nil {
				mark(u, l.ID)
			}
			if err := u.Exec(ctx); err != nil {
				return err
			}
		}
		if sess.NextSendAt != nil {
			return tx.Session.UpdateOne(sess).SetNextSendAt(sess.NextSendAt.Add(shift)).Exec(ctx)
		}
		return nil
	})
}

// resumePaced goes on with the sends of a session that connected again:
// the scheduler looks at once.
// when its first queued send was moved on while the session was away
// (postponePaced), the queue moves back together so that the first is due
// now, rather than at the end of its wait.
func (s *Service) resumePaced(ctx context.Context, sessionID string) error {
	now := s.now().UTC().Truncate(time.Millisecond)
	resumed := false
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		sess, err := tx.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx)
		if err != nil {
			return fmt.Errorf("lock session %s: %w", sessionID, err)
		}
		queued, err := tx.ScheduledSend.Query().Where(scheduledsend.SessionID(sessionID),
			scheduledsend.StateEQ(scheduledsend.StatePending), scheduledsend.Paced(true)).
			Order(scheduledsend.ByDueAt()).All(ctx)
		if err != nil || len(queued) == 0 || queued[0].Attempts == 0 || !queued[0].DueAt.After(now) {
			return err
		}
		back := queued[0].DueAt.Sub(now)
		for _, q := range queued {
			if err := tx.ScheduledSend.UpdateOne(q).SetDueAt(q.DueAt.Add(-back)).Exec(ctx); err != nil {
				return err
			}
		}
		resumed = true
		if sess.NextSendAt != nil {
			return tx.Session.UpdateOne(sess).SetNextSendAt(sess.NextSendAt.Add(-back)).Exec(ctx)
		}
		return nil
	})
	if err == nil && resumed {
		s.log.InfoContext(ctx, "the send queue goes on", "session_id", sessionID)
	}
	// Whether or not it waited: the session may have just come to this
	// process (a restart, a failover), whose scheduler did not run it.
	s.wakeScheduler()
	return err
}

// typeFirst shows the account typing in out's chat before a text when the
// session simulates typing: COMPOSING for a time that grows with the
// text, then PAUSED. A presence WhatsApp does not take fails the send.
func (s *Service) typeFirst(ctx context.Context, sessionID string, out whatsapp.Outgoing) error {
	if out.Type != TypeText {
		return nil
	}
	set, err := s.settingsOf(ctx, sessionID)
	if err != nil || !set.SimulateTyping {
		return err
	}
	typing := whatsapp.Presence{State: whatsapp.PresenceComposing, Chat: out.To}
	if _, err := whatsapp.OpSendPresence().Do(ctx, s.wa, sessionID, typing); err != nil {
		return err
	}
	t := time.NewTimer(sessionsettings.TypingTime(utf8.RuneCountInString(out.Text)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	typing.State = whatsapp.PresencePaused
	_, err = whatsapp.OpSendPresence().Do(ctx, s.wa, sessionID, typing)
	return err
}
