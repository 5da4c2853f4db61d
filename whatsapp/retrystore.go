package whatsapp

// Retries after a restart or a failover (issue 32). A recipient's device
// that cannot decrypt a message asks its sender for it again (a retry
// receipt). whatsmeow answers from the messages it sent in this process
// (its last 256, in memory) and, with UseRetryMessageStore, from its
// retry store in the device database (whatsmeow_retry_buffer, in the
// schema of both SQLite and PostgreSQL): so a message sent before a
// restart, or by the process that held the session before a failover, is
// still sent again. Rows go with their device (a foreign key with ON
// DELETE CASCADE) and are pruned after retryKeep.

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
)

const (
	// retryKeep is how long whatsmeow keeps a sent message for a retry
	// (sqlstore DeleteOldOutgoingEvents: 7 days); documented, not set.
	retryKeep = 7 * 24 * time.Hour
	// retryPruneEvery is how often the retry store's old rows are pruned
	// at most: whatsmeow means to prune every 12 hours, but at our pin
	// never records that it did (retry.go lastRetryStoreClear), so it
	// would run the DELETE on every send.
	retryPruneEvery = 12 * time.Hour
)

// keepSentForRetries has cli keep what it sends in the retry store.
func keepSentForRetries(cli *whatsmeow.Client) {
	cli.UseRetryMessageStore = true
}

// prunedRetries is a device's event buffer whose pruning of old sent
// messages runs at most once per retryPruneEvery; the rest is the store's.
type prunedRetries struct {
	store.EventBuffer
	now   func() time.Time
	mu    *sync.Mutex
	last  *time.Time // the last prune that succeeded
	every time.Duration
}

// limitRetryPrune wraps dev's event buffer so that whatsmeow's prune of
// its retry store runs at most once per retryPruneEvery.
func limitRetryPrune(dev *store.Device) {
	dev.EventBuffer = newPrunedRetries(dev.EventBuffer, time.Now, retryPruneEvery)
}

func newPrunedRetries(buf store.EventBuffer, now func() time.Time, every time.Duration) prunedRetries {
	return prunedRetries{EventBuffer: buf, now: now, mu: &sync.Mutex{}, last: &time.Time{}, every: every}
}

func (p prunedRetries) DeleteOldOutgoingEvents(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.last.IsZero() && now.Sub(*p.last) < p.every {
		return nil
	}
	if err := p.EventBuffer.DeleteOldOutgoingEvents(ctx); err != nil {
		return err
	}
	*p.last = now
	return nil
}
