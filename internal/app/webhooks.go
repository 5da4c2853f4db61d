package app

import (
	"context"
	"io"
	"time"

	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/webhook"
)

// webhooks is the event log and the webhook outbox's dispatcher, which
// runs in a goroutine the App owns from New until Close.
type webhooks struct {
	deliveries *webhook.DeliveryLog
	dispatcher *webhook.Dispatcher
	sender     *webhook.Sender
	stop       context.CancelFunc
	done       chan struct{} // closed when the dispatcher's Run has returned
}

// startWebhooks builds the dispatcher over the event log and starts it.
// Deliveries due from before a restart go out at once.
func (a *App) startWebhooks(now func() time.Time, random io.Reader) *webhooks {
	sender := webhook.NewSender(netguard.New(netguard.Options{AllowPrivate: a.cfg.AllowPrivateURLs}), a.cfg.WebhookTimeout, a.log)
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		DB: a.db, Sender: sender, Schedule: a.cfg.WebhookRetry, Now: now, Logger: a.log, Observer: a.metrics,
	})
	ctx, stop := context.WithCancel(context.Background())
	w := &webhooks{
		deliveries: webhook.NewDeliveryLog(a.db, now, random, d),
		dispatcher: d, sender: sender, stop: stop, done: make(chan struct{}),
	}
	go func() {
		defer close(w.done)
		d.Run(ctx)
	}()
	return w
}

// close stops the dispatcher (attempts in flight are given back, due at
// the next start); the database is still open.
func (w *webhooks) close() {
	w.stop()
	<-w.done
	w.sender.Close()
}
