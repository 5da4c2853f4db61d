package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	"github.com/wagraph/wagraph/ent/predicate"
)

// waiting selects the PENDING deliveries this dispatcher may take: not one
// of its own in flight, not of a webhook at its bound.
func waiting(busy, full []string) []predicate.Delivery {
	ps := []predicate.Delivery{entdelivery.StatusEQ(entdelivery.StatusPENDING)}
	if len(busy) > 0 {
		ps = append(ps, entdelivery.IDNotIn(busy...))
	}
	if len(full) > 0 {
		ps = append(ps, entdelivery.WebhookIDNotIn(full...))
	}
	return ps
}

// nextDue returns when the earliest delivery it may take is due; found is
// false when there is none.
func (d *Dispatcher) nextDue(ctx context.Context, busy, full []string) (next time.Time, found bool, err error) {
	row, err := d.db.Delivery.Query().Where(waiting(busy, full)...).
		Order(ent.Asc(entdelivery.FieldNextAttemptAt)).
		Select(entdelivery.FieldNextAttemptAt).First(ctx)
	if ent.IsNotFound(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the next due delivery: %w", err)
	}
	return row.NextAttemptAt, true, nil
}

// claim takes up to limit deliveries due at now, earliest first, skipping
// those of webhooks with no room left (room: the attempts each may still
// start), and calls took for each one won, once the claims are committed.
//
// A claim is a conditional UPDATE that pushes next_attempt_at past the
// lease, so two claimers (goroutines or processes) cannot both win a row,
// and a claimer that dies mid-attempt leaves its row due again when the
// lease ends: the attempt is made again, at least once. On PostgreSQL the
// candidates' SELECT is to take FOR UPDATE SKIP LOCKED, so claimers do not
// queue on each other's rows; this is the one place to change.
func (d *Dispatcher) claim(ctx context.Context, now time.Time, busy, full []string, limit int,
	room func(webhookID string) int, took func(id, webhookID string)) ([]*ent.Delivery, error) {
	now = now.UTC()
	until := now.Add(d.lease)
	var won []*ent.Delivery
	// One transaction for the read and every claim: one SQLite write lock
	// for the lot, where an UPDATE each made the dispatcher queue on the
	// lock against the event log's writer once per delivery. The event
	// and the webhook are read with the candidates: the attempt needs
	// them, and reading them now saves two queries per attempt.
	err := ent.WithTx(ctx, d.db, func(tx *ent.Tx) error {
		won = nil
		candidates, err := tx.Delivery.Query().
			Where(append(waiting(busy, full), entdelivery.NextAttemptAtLTE(now))...).
			Order(ent.Asc(entdelivery.FieldNextAttemptAt), ent.Asc(entdelivery.FieldID)).
			Limit(limit).WithEvent().WithWebhook().All(ctx)
		if err != nil {
			return fmt.Errorf("read due deliveries: %w", err)
		}
		taken := map[string]int{}
		for _, c := range candidates {
			if taken[c.WebhookID] >= room(c.WebhookID) {
				continue
			}
			n, err := tx.Delivery.Update().
				Where(entdelivery.ID(c.ID), entdelivery.StatusEQ(entdelivery.StatusPENDING), entdelivery.NextAttemptAtLTE(now)).
				SetNextAttemptAt(until).Save(ctx)
			if err != nil {
				return fmt.Errorf("claim delivery %s: %w", c.ID, err)
			}
			if n == 1 {
				c.NextAttemptAt = until
				won = append(won, c)
				taken[c.WebhookID]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err // rolled back: nothing was claimed
	}
	for _, c := range won {
		took(c.ID, c.WebhookID)
	}
	return won, nil
}

// release gives a claimed delivery back, due at once, without counting an
// attempt: the attempt was cut short by the dispatcher stopping, not
// answered by the receiver. It holds only while the claim is this
// dispatcher's (the row still carries its lease).
func (d *Dispatcher) release(ctx context.Context, dlv *ent.Delivery) error {
	_, err := d.db.Delivery.Update().
		Where(entdelivery.ID(dlv.ID), entdelivery.StatusEQ(entdelivery.StatusPENDING),
			entdelivery.Attempts(dlv.Attempts), entdelivery.NextAttemptAt(dlv.NextAttemptAt)).
		SetNextAttemptAt(d.now().UTC()).Save(ctx)
	if err != nil {
		return fmt.Errorf("release delivery %s: %w", dlv.ID, err)
	}
	return nil
}
