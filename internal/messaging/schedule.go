package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/predicate"
	"github.com/wagraph/wagraph/ent/scheduledsend"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// Scheduler timings. A due send whose session is not connected waits for
// it: retried with a growing pause, given up a day after it was due.
const (
	schedulerBatch = 20
	schedulerIdle  = 30 * time.Second // the longest sleep: new rows also wake it
	retryFirst     = 5 * time.Second
	retryMax       = 5 * time.Minute
	giveUpAfter    = 24 * time.Hour
)

// encodeScheduled is the stored form of a scheduled send: the JSON of
// out, whose fields are all kept (whatsapp.Outgoing is written for it), with
// its media's bytes apart (the row's media column) and without its id (the
// row's).
func encodeScheduled(out whatsapp.Outgoing) (payload, data []byte, err error) {
	out.ID = ""
	if m := out.Media; m != nil {
		data = m.Data
		if len(data) == 0 && m.Body != nil { // a forward's media, kept in a file so far
			if data, err = io.ReadAll(io.NewSectionReader(m.Body, 0, m.Body.Size())); err != nil {
				return nil, nil, fmt.Errorf("read the media of a scheduled send: %w", err)
			}
		}
		bare := *m
		bare.Data, bare.Body = nil, nil
		out.Media = &bare
	}
	payload, err = json.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("encode scheduled send: %w", err)
	}
	return payload, data, nil
}

// decodeScheduled is the send stored as payload and data under id. A row
// stored before Outgoing was its own stored form reads the same: its keys
// were Outgoing's but for case, which encoding/json ignores.
func decodeScheduled(id string, payload, data []byte) (whatsapp.Outgoing, error) {
	var out whatsapp.Outgoing
	if err := json.Unmarshal(payload, &out); err != nil {
		return whatsapp.Outgoing{}, err
	}
	out.ID = id
	if out.Media != nil {
		out.Media.Data = data
	}
	return out, nil
}

// schedule stores a send for later under a reserved message id; the
// message store shows it as scheduled until it goes out.
func (s *Service) schedule(ctx context.Context, sessionID string, out whatsapp.Outgoing, delay int) (Result, error) {
	id := out.ID // reserved by an idempotency key
	if id == "" {
		id = whatsapp.NewMessageID()
	}
	due := s.now().UTC().Add(time.Duration(delay) * time.Second).Truncate(time.Millisecond)
	payload, data, err := encodeScheduled(out)
	if err != nil {
		return Result{}, err
	}
	err = ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		return s.storeScheduled(ctx, tx, sessionID, id, out, due, payload, data, false)
	})
	if err != nil {
		return Result{}, err
	}
	s.scheduled(ctx, sessionID, id, due)
	return Result{MessageID: id, ScheduledAt: &due}, nil
}

// storeScheduled stores the send out (encoded as payload and data) under
// id, due at due, within the session's quota; paced: queued by the send
// rate.
func (s *Service) storeScheduled(ctx context.Context, tx *ent.Tx, sessionID, id string, out whatsapp.Outgoing, due time.Time, payload, data []byte, paced bool) error {
	if err := s.checkScheduleQuota(ctx, tx, sessionID, int64(len(payload)+len(data))); err != nil {
		return err
	}
	c := tx.ScheduledSend.Create().SetID(id).SetSessionID(sessionID).SetDueAt(due).SetPayload(payload).
		SetCreatedAt(s.now().UTC()).SetPaced(paced)
	if data != nil {
		c.SetMedia(data)
	}
	if err := c.Exec(ctx); err != nil {
		return fmt.Errorf("store scheduled send: %w", err)
	}
	err := tx.Message.Create().SetSessionID(sessionID).SetMessageID(id).SetChat(out.To.String()).
		SetSender("").SetFromMe(true).SetType(out.Type).SetText(out.Text).SetCaption(out.Caption).
		SetStatus(entmessage.StatusScheduled).SetTimestamp(due).SetViewOnce(out.ViewOnce).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store scheduled message: %w", err)
	}
	return nil
}

// scheduled logs a stored send and wakes the scheduler for it.
func (s *Service) scheduled(ctx context.Context, sessionID, id string, due time.Time) {
	s.log.InfoContext(ctx, "send scheduled", "session_id", sessionID, "message_id", id, "due_at", due)
	s.wakeScheduler()
}

// wakeScheduler has the scheduler look for due sends again.
func (s *Service) wakeScheduler() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// checkScheduleQuota refuses a scheduled send of size bytes that would
// take the session past its pending sends or their bytes, with the
// session's row locked so that two schedules cannot both take the last
// place. A scheduled send keeps its prepared media (up to the media limit)
// until it is due, so the bytes are the bound that matters.
func (s *Service) checkScheduleQuota(ctx context.Context, tx *ent.Tx, sessionID string, size int64) error {
	if s.maxScheduled <= 0 && s.maxScheduledBytes <= 0 {
		return nil
	}
	if _, err := tx.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx); err != nil {
		return fmt.Errorf("lock session %s: %w", sessionID, err)
	}
	var pending []struct {
		Count int   `json:"count"`
		Bytes int64 `json:"bytes"`
	}
	err := tx.ScheduledSend.Query().
		Where(scheduledsend.SessionID(sessionID), scheduledsend.StateEQ(scheduledsend.StatePending)).
		Aggregate(ent.As(ent.Count(), "count"), func(sel *sql.Selector) string {
			return sql.As("COALESCE(SUM(LENGTH("+sel.C(scheduledsend.FieldPayload)+") + COALESCE(LENGTH("+sel.C(scheduledsend.FieldMedia)+"), 0)), 0)", "bytes")
		}).Scan(ctx, &pending)
	if err != nil {
		return fmt.Errorf("count the pending scheduled sends of session %s: %w", sessionID, err)
	}
	n, bytes := 0, int64(0)
	if len(pending) == 1 {
		n, bytes = pending[0].Count, pending[0].Bytes
	}
	if s.maxScheduled > 0 && n >= s.maxScheduled {
		return fault.New(fault.Conflict, "quota reached: session %s has %d pending scheduled sends, the most one may have (--max-scheduled-per-session); cancel one or wait until they are sent", sessionID, n)
	}
	if s.maxScheduledBytes > 0 && bytes+size > s.maxScheduledBytes {
		return fault.New(fault.Conflict, "quota reached: session %s's pending scheduled sends keep %d bytes, and this one's %d would pass the most they may keep, %d (--max-scheduled-bytes-per-session); cancel one or wait until they are sent", sessionID, bytes, size, s.maxScheduledBytes)
	}
	return nil
}

// cancel ends a scheduled send that has not gone out.
func (s *Service) cancel(ctx context.Context, sessionID, id string) error {
	return ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		n, err := tx.ScheduledSend.Update().
			Where(scheduledsend.ID(id), scheduledsend.SessionID(sessionID), scheduledsend.StateEQ(scheduledsend.StatePending)).
			SetState(scheduledsend.StateFailed).SetLastError("cancelled").SetDoneAt(s.now().UTC()).Save(ctx)
		if err != nil {
			return fmt.Errorf("cancel scheduled send %s: %w", id, err)
		}
		if n == 0 {
			return fault.New(fault.Conflict, "message %s is being sent and can no longer be cancelled", id)
		}
		_, err = tx.Message.Update().Where(entmessage.SessionID(sessionID), entmessage.MessageID(id)).
			SetStatus(entmessage.StatusRevoked).Save(ctx)
		return err
	})
}

// Run performs due sends, and the automations of the sessions' settings,
// until ctx is done. The app owns it: it starts it after the session
// manager restored the sessions and cancels it before closing the manager.
func (s *Service) Run(ctx context.Context) {
	automating := make(chan struct{})
	go func() {
		defer close(automating)
		s.automate(ctx)
	}()
	defer func() { <-automating }()
	for {
		if now := s.now(); now.Sub(s.pruned) > time.Minute {
			s.pruned = now
			if err := s.pruneKeys(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("scheduler", "err", err)
			}
		}
		next, err := s.runDue(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("scheduler", "err", err)
			next = retryFirst
		}
		t := time.NewTimer(min(next, schedulerIdle))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// runDue sends every due row and returns how long until the next one.
func (s *Service) runDue(ctx context.Context) (time.Duration, error) {
	pending := []predicate.ScheduledSend{scheduledsend.StateEQ(scheduledsend.StatePending)}
	if s.held != nil {
		ids := s.held()
		if len(ids) == 0 {
			return schedulerIdle, nil
		}
		pending = append(pending, scheduledsend.SessionIDIn(ids...))
	}
	for ctx.Err() == nil {
		rows, err := s.db.ScheduledSend.Query().
			Where(append(pending, scheduledsend.DueAtLTE(s.now().UTC()))...).
			Order(scheduledsend.ByDueAt(), scheduledsend.ByID()).Limit(schedulerBatch).All(ctx)
		if err != nil {
			return 0, fmt.Errorf("due sends: %w", err)
		}
		s.performAll(ctx, rows)
		if ctx.Err() != nil {
			return 0, nil
		}
		if len(rows) < schedulerBatch {
			break
		}
	}
	next, err := s.db.ScheduledSend.Query().
		Where(pending...).
		Order(scheduledsend.ByDueAt()).First(ctx)
	if ent.IsNotFound(err) {
		return schedulerIdle, nil
	}
	if err != nil {
		return 0, fmt.Errorf("next send: %w", err)
	}
	return max(next.DueAt.Sub(s.now()), 0), nil
}

// performAll makes the due sends rows, each session's in order and the
// sessions side by side: one session's send that takes long (typed first,
// a slow upload) does not hold up another's. A session found not
// connected keeps its later rows for the next pass.
func (s *Service) performAll(ctx context.Context, rows []*ent.ScheduledSend) {
	var order []string
	bySession := map[string][]*ent.ScheduledSend{}
	for _, row := range rows {
		if bySession[row.SessionID] == nil {
			order = append(order, row.SessionID)
		}
		bySession[row.SessionID] = append(bySession[row.SessionID], row)
	}
	var wg sync.WaitGroup
	for _, id := range order {
		wg.Go(func() {
			rows := bySession[id]
			for i, row := range rows {
				if ctx.Err() != nil || s.perform(ctx, row) {
					return
				}
				if next := rows[min(i+1, len(rows)-1)]; i+1 < len(rows) && row.Paced && next.Paced {
					// Due already, as the queue fell behind: spaced again.
					if err := s.respace(ctx, next, next.DueAt.Sub(row.DueAt)); err != nil {
						s.log.Error("scheduler: space the queue", "session_id", id, "err", err)
					}
					return
				}
			}
		})
	}
	wg.Wait()
}

// perform makes one scheduled send. A session that is not connected is
// waited for (perform reports true); any other failure is final and
// reported.
func (s *Service) perform(ctx context.Context, row *ent.ScheduledSend) (waits bool) {
	log := s.log.With("session_id", row.SessionID, "message_id", row.ID)
	var data []byte
	if row.Media != nil {
		data = *row.Media
	}
	out, err := decodeScheduled(row.ID, row.Payload, data)
	if err != nil {
		s.finish(ctx, log, row, out, fmt.Errorf("stored send cannot be read: %w", err))
		return false
	}
	if whatsapp.LimitRefusal(row.LastError) {
		// Refused for a limit before: not tried again while it lasts.
		if until := s.limitEnd(ctx, log, row.SessionID); until.After(s.now()) {
			s.postpone(ctx, log, row, errors.New(row.LastError), s.holdUntil(row, until))
			return false
		}
	}
	err = s.typeFirst(ctx, row.SessionID, out)
	if err == nil {
		var sent whatsapp.Sent
		if sent, err = whatsapp.OpSend().Do(ctx, s.wa, row.SessionID, out); err == nil {
			s.keepSent(ctx, row.SessionID, sent.ID, out)
		}
	}
	switch {
	case err == nil:
		s.finish(ctx, log, row, out, nil)
	case ctx.Err() != nil:
		// Shutting down: the row stays pending and is sent after the next start.
	case whatsapp.RefusedForLimit(err):
		s.holdForLimit(ctx, log, row, out, err)
	case fault.CodeOf(err) == fault.NotConnected && s.now().Sub(row.DueAt) < giveUpAfter:
		wait := min(retryFirst<<min(row.Attempts, 10), retryMax)
		if row.Paced {
			if uerr := s.postponePaced(ctx, row, wait, err); uerr != nil {
				log.Error("scheduler: postpone send", "err", uerr)
			}
		} else {
			s.postpone(ctx, log, row, err, s.now().UTC().Add(wait))
		}
		log.Info("scheduled send waits for its session", "retry_in", wait, "reason", err.Error())
		return true
	default:
		s.finish(ctx, log, row, out, err)
	}
	return false
}

// holdForLimit postpones a send WhatsApp refused for one of its limits
// (the reach-out timelock) until the limit ends, as the session's stored
// limits tell; when they tell no end, it waits as for a disconnected
// session, and fails once that wait is over.
func (s *Service) holdForLimit(ctx context.Context, log *slog.Logger, row *ent.ScheduledSend, out whatsapp.Outgoing, err error) {
	until := s.limitEnd(ctx, log, row.SessionID)
	if !until.After(s.now()) && s.now().Sub(row.DueAt) >= giveUpAfter {
		s.finish(ctx, log, row, out, err)
		return
	}
	s.postpone(ctx, log, row, err, s.holdUntil(row, until))
	log.Info("scheduled send waits for a limit of WhatsApp's to end", "until", until, "reason", err.Error())
}

// limitEnd is when the limit WhatsApp put on the session's account ends:
// zero when none is known (or it has ended).
func (s *Service) limitEnd(ctx context.Context, log *slog.Logger, sessionID string) time.Time {
	if s.limits == nil {
		return time.Time{}
	}
	l, err := s.limits.LoadLimits(ctx, sessionID)
	if err != nil {
		log.Warn("scheduler: read the session's limits", "err", err)
	}
	return l.ReachoutTimelockUntil
}

// holdUntil is when a send held for a limit that ends at until (zero: not
// known) is looked at again: at the end, or sooner with the growing pause
// of a disconnected session's sends, so that a limit WhatsApp lifts early
// holds it no longer than that pause; it is not tried before the limit
// ends (perform).
func (s *Service) holdUntil(row *ent.ScheduledSend, until time.Time) time.Time {
	next := s.now().UTC().Add(min(retryFirst<<min(row.Attempts, 10), retryMax))
	if until.After(s.now()) && until.Before(next) {
		return until.UTC()
	}
	return next
}

// postpone makes row due again at at, counting the attempt and its error.
func (s *Service) postpone(ctx context.Context, log *slog.Logger, row *ent.ScheduledSend, cause error, at time.Time) {
	if err := s.db.ScheduledSend.UpdateOne(row).SetAttempts(row.Attempts + 1).SetLastError(cause.Error()).
		SetDueAt(at.UTC()).Exec(ctx); err != nil {
		log.Error("scheduler: postpone send", "err", err)
	}
}

// finish records a scheduled send's outcome and publishes it as
// messages.update (sent or failed). A failure is logged with its cause: no
// request carries it to a transport, and the stored reason a user reads
// does not say it. log carries the session and the send's id.
func (s *Service) finish(ctx context.Context, log *slog.Logger, row *ent.ScheduledSend, out whatsapp.Outgoing, sendErr error) {
	s.observe(out.Type, false, sendErr)
	state, status, reason := scheduledsend.StateSent, entmessage.StatusSent, ""
	if sendErr != nil {
		state, status, reason = scheduledsend.StateFailed, entmessage.StatusFailed, clientMessage(sendErr)
		logFailedSend(ctx, log, sendErr)
	}
	now := s.now().UTC()
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		if err := tx.ScheduledSend.UpdateOne(row).SetState(state).SetAttempts(row.Attempts + 1).
			SetLastError(reason).SetDoneAt(now).ClearMedia().Exec(ctx); err != nil {
			return err
		}
		_, err := tx.Message.Update().Where(entmessage.SessionID(row.SessionID), entmessage.MessageID(row.ID)).
			SetStatus(status).Save(ctx)
		return err
	})
	if err != nil {
		log.Error("scheduler: record outcome", "err", err)
		return
	}
	data := &payload.MessageStatus{ID: row.ID, Chat: out.To.String(), Status: string(status), Error: payload.Text(reason), Timestamp: payload.At(now)}
	if s.pub != nil {
		if err := s.pub.Publish(ctx, row.SessionID, whatsapp.Event{Kind: whatsapp.KindMessagesUpdate, Data: data}); err != nil {
			log.Error("scheduler: publish outcome", "err", err)
		}
	}
}

// logFailedSend logs why a scheduled send failed: at warn when WhatsApp
// or the send itself was at fault, at error for an internal failure.
func logFailedSend(ctx context.Context, log *slog.Logger, err error) {
	level, args := slog.LevelWarn, []any{"err", err}
	f := fault.From(err)
	if f == nil || f.Code == fault.Internal {
		level = slog.LevelError
	}
	if f != nil {
		args = append(args, "code", string(f.Code))
		if f.Cause != nil {
			args = append(args, "cause", f.Cause)
		}
	}
	log.Log(ctx, level, "scheduled send failed", args...)
}

// clientMessage is what a user may read of a failure: a fault's message,
// or a generic line for anything unclassified.
func clientMessage(err error) string {
	if f := fault.From(err); f != nil && f.Code != fault.Internal {
		return f.Message
	}
	return "the send failed (see the server log)"
}
