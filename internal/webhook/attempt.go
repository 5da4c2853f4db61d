package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entwebhook "github.com/wagraph/wagraph/ent/webhook"
	"github.com/wagraph/wagraph/internal/events"
)

const (
	// recordTimeout bounds writing an attempt's result, which goes on when
	// the dispatcher is stopping: what the receiver answered is kept.
	recordTimeout = 10 * time.Second

	// msgDisabled is the error of a delivery ended because its
	// webhook was disabled when it came due.
	msgDisabled = "webhook disabled"
	// msgGone is the error of the attempt that disabled its webhook.
	msgGone = "the receiver answered 410 Gone: the webhook is now disabled"
)

// errNotClaimed: the row changed under the attempt (the webhook was
// deleted, or the lease ran out and another claimer recorded first).
var errNotClaimed = errors.New("the delivery is no longer this attempt's")

// attempt makes one attempt of a claimed delivery and records it through
// records (Run's recorder).
func (d *Dispatcher) attempt(ctx context.Context, claimed *ent.Delivery, records chan<- *recordReq) {
	log := d.log.With("delivery_id", claimed.ID, "event_id", claimed.EventID, "webhook_id", claimed.WebhookID)
	dlv, err := claimed, error(nil)
	if claimed.Edges.Event == nil || claimed.Edges.Webhook == nil {
		dlv, err = d.db.Delivery.Query().Where(entdelivery.ID(claimed.ID)).WithEvent().WithWebhook().Only(ctx)
	}
	switch {
	case ent.IsNotFound(err):
		log.Debug("webhook delivery deleted before its attempt")
		return
	case err != nil && ctx.Err() != nil:
		d.giveBack(ctx, claimed, log)
		return
	case err != nil:
		// The row stays claimed: it is due again when the lease ends.
		log.Error("webhook delivery could not be read", "err", err)
		return
	}
	hook, ev := dlv.Edges.Webhook, dlv.Edges.Event
	log = log.With("session_id", hook.SessionID)
	if !hook.Enabled && ev.Kind != string(events.WebhookTest) {
		d.endDisabled(ctx, claimed, log)
		return
	}
	body, err := json.Marshal(events.EnvelopeOf(ev))
	if err != nil {
		log.Error("webhook delivery: the event cannot be encoded", "err", err)
		return
	}

	start := d.now()
	out := d.sender.Send(ctx, TargetOf(hook), ev.ID, body)
	end := d.now()
	if ctx.Err() != nil && out.StatusCode == 0 {
		// Stopping, and the receiver said nothing: this was no attempt.
		d.giveBack(ctx, claimed, log)
		return
	}
	// The duration is read on the dispatcher's clock, like the attempt's
	// time, so both follow one clock (a test's pinned clock included).
	took := end.Sub(start)
	res, err := d.submit(records, claimed, hook.ID, out, start, end)
	attrs := []any{"attempt", claimed.Attempts + 1, "status_code", out.StatusCode, "duration", took, "outcome", res.outcome}
	if out.Err != "" {
		attrs = append(attrs, "error", out.Err)
	}
	if out.cause != nil {
		// The delivery log holds only the class of the failure; the
		// server's log keeps what happened.
		attrs = append(attrs, "cause", scrubSecret(out.cause.Error(), hook.Secret))
	}
	if res.outcome == OutcomeRetry {
		attrs = append(attrs, "next_attempt_at", res.next)
	}
	switch {
	case errors.Is(err, errNotClaimed):
		log.Warn("webhook attempt not recorded: the delivery changed meanwhile", attrs...)
		return
	case err != nil:
		log.Error("webhook attempt not recorded; the delivery is due again when its claim ends", append(attrs, "err", err)...)
		return
	case res.outcome == OutcomeDelivered:
		log.Info("webhook attempt", attrs...)
	default:
		log.Warn("webhook attempt", attrs...)
	}
	if d.observer != nil {
		d.observer.DeliveryAttempted(res.outcome, took)
	}
}

// recorded is what an attempt made of its delivery.
type recorded struct {
	outcome string
	next    time.Time // the next attempt, for OutcomeRetry
}

// recordReq is one attempt to record: the claimed delivery, what the
// receiver answered and when; res and err are filled in by the write.
type recordReq struct {
	dlv        *ent.Delivery
	webhookID  string
	out        Outcome
	start, end time.Time
	res        recorded
	err        error
	done       chan struct{} // closed once res and err are set (recorder only)
}

// maxRecordBatch bounds the attempts recorded in one transaction.
const maxRecordBatch = 64

// record stores the attempt and the delivery's next state in one
// transaction: 2xx delivered; 410 failed and the webhook disabled; anything
// else the next attempt of the schedule, or failed after the last.
func (d *Dispatcher) record(ctx context.Context, dlv *ent.Delivery, webhookID string, out Outcome, start, end time.Time) (recorded, error) {
	r := &recordReq{dlv: dlv, webhookID: webhookID, out: out, start: start, end: end}
	d.recordBatch(ctx, []*recordReq{r})
	return r.res, r.err
}

// submit records an attempt through the recorder of Run (records), which
// writes the attempts that finish together in one transaction: one
// SQLite write lock for many deliveries, where one transaction each made
// the attempts queue on the lock against the event log's writer. It
// returns once the attempt is committed (or failed to be).
func (d *Dispatcher) submit(records chan<- *recordReq, dlv *ent.Delivery, webhookID string, out Outcome, start, end time.Time) (recorded, error) {
	r := &recordReq{dlv: dlv, webhookID: webhookID, out: out, start: start, end: end, done: make(chan struct{})}
	records <- r
	<-r.done
	return r.res, r.err
}

// recordLoop is Run's recorder: it takes what attempts are waiting (up to
// maxRecordBatch) and records them in one transaction, until records is
// closed (after every attempt ended). A write goes on when the dispatcher
// is stopping: what the receivers answered is kept.
func (d *Dispatcher) recordLoop(ctx context.Context, records <-chan *recordReq) {
	ctx = context.WithoutCancel(ctx)
	for r := range records {
		batch := []*recordReq{r}
	more:
		for len(batch) < maxRecordBatch {
			select {
			case r, ok := <-records:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		rctx, cancel := context.WithTimeout(ctx, recordTimeout)
		d.recordBatch(rctx, batch)
		cancel()
		for _, r := range batch {
			close(r.done)
		}
	}
}

// recordBatch writes the attempts of batch in one transaction and sets
// each one's result. When the transaction fails, each is written again on
// its own, so one bad row does not leave the others unrecorded (due again
// at the end of their claims: delivered twice).
func (d *Dispatcher) recordBatch(ctx context.Context, batch []*recordReq) {
	for _, r := range batch {
		r.res = d.outcomeOf(r)
	}
	err := d.writeRecords(ctx, batch)
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].err = err
		return
	}
	for _, r := range batch {
		if err := d.writeRecords(ctx, []*recordReq{r}); err != nil {
			r.err = err
		}
	}
}

// outcomeOf is what the answer makes of the delivery.
func (d *Dispatcher) outcomeOf(r *recordReq) recorded {
	var res recorded
	switch r.out.Status {
	case Delivered:
		res.outcome = OutcomeDelivered
	case Gone:
		res.outcome = OutcomeGone
	default:
		if next, ok := NextAttempt(d.schedule, r.dlv.Attempts+2, r.end, d.jitter); ok {
			res.outcome, res.next = OutcomeRetry, next.UTC()
		} else {
			res.outcome = OutcomeFailed
		}
	}
	return res
}

// writeRecords records the attempts of batch in one transaction; one whose
// delivery changed under it (errNotClaimed) is left out and told so, the
// others are written. An error of the transaction is returned and none is
// written.
func (d *Dispatcher) writeRecords(ctx context.Context, batch []*recordReq) error {
	return ent.WithTx(ctx, d.db, func(tx *ent.Tx) error {
		for _, r := range batch {
			r.err = nil
			err := writeRecord(ctx, tx, r)
			if errors.Is(err, errNotClaimed) {
				r.err = err
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// writeRecord stores one attempt and its delivery's next state in tx.
func writeRecord(ctx context.Context, tx *ent.Tx, r *recordReq) error {
	dlv, out, res := r.dlv, r.out, r.res
	n := dlv.Attempts + 1
	ms := r.end.Sub(r.start).Milliseconds()
	msg := out.Err
	if res.outcome == OutcomeGone {
		msg = msgGone
	}
	a := tx.Attempt.Create().SetDeliveryID(dlv.ID).SetN(n).SetDurationMs(ms).SetError(msg).SetAt(r.start.UTC())
	u := tx.Delivery.Update().
		Where(entdelivery.ID(dlv.ID), entdelivery.StatusEQ(entdelivery.StatusPENDING), entdelivery.Attempts(dlv.Attempts)).
		SetAttempts(n).SetLastDurationMs(ms).SetLastError(msg).SetUpdatedAt(r.end.UTC())
	if out.StatusCode != 0 {
		a.SetStatusCode(out.StatusCode)
		u.SetLastStatusCode(out.StatusCode)
	} else {
		u.ClearLastStatusCode()
	}
	switch res.outcome {
	case OutcomeDelivered:
		u.SetStatus(entdelivery.StatusDELIVERED)
	case OutcomeGone:
		u.SetStatus(entdelivery.StatusFAILED)
		if err := tx.Webhook.Update().Where(entwebhook.ID(r.webhookID)).
			SetEnabled(false).SetUpdatedAt(r.end.UTC()).Exec(ctx); err != nil {
			return fmt.Errorf("disable webhook %s: %w", r.webhookID, err)
		}
	case OutcomeRetry:
		u.SetNextAttemptAt(res.next)
	case OutcomeFailed:
		u.SetStatus(entdelivery.StatusFAILED)
	}
	changed, err := u.Save(ctx)
	if err != nil {
		return fmt.Errorf("update delivery %s: %w", dlv.ID, err)
	}
	if changed == 0 {
		return errNotClaimed
	}
	if err := a.Exec(ctx); err != nil {
		return fmt.Errorf("store attempt %d of delivery %s: %w", n, dlv.ID, err)
	}
	return nil
}

// endDisabled ends a delivery whose webhook is disabled, without an
// attempt.
func (d *Dispatcher) endDisabled(ctx context.Context, dlv *ent.Delivery, log *slog.Logger) {
	changed, err := d.db.Delivery.Update().
		Where(entdelivery.ID(dlv.ID), entdelivery.StatusEQ(entdelivery.StatusPENDING), entdelivery.Attempts(dlv.Attempts)).
		SetStatus(entdelivery.StatusFAILED).SetLastError(msgDisabled).SetUpdatedAt(d.now().UTC()).Save(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		d.giveBack(ctx, dlv, log)
	case err != nil:
		log.Error("webhook delivery of a disabled webhook could not be ended", "err", err)
	case changed == 1:
		log.Info("webhook delivery ended without an attempt: the webhook is disabled", "attempts", dlv.Attempts)
	}
}

// giveBack releases a claim when the dispatcher stops.
func (d *Dispatcher) giveBack(ctx context.Context, dlv *ent.Delivery, log *slog.Logger) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := d.release(rctx, dlv); err != nil {
		log.Warn("webhook delivery claim not given back at stop; it is due again when the claim ends", "err", err)
		return
	}
	log.Debug("webhook attempt stopped with the dispatcher; the delivery is due at once")
}
