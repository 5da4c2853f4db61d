package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/webhook"
)

// webhooks is the webhook outbox's dispatcher, which runs in a goroutine
// the App owns from New until Close, and the log of its deliveries.
type webhooks struct {
	deliveries *webhook.DeliveryLog
	dispatcher *webhook.Dispatcher
	sender     *webhook.Sender
	stop       context.CancelFunc
	done       chan struct{} // closed when the dispatcher's Run has returned
}

// startWebhooks builds the dispatcher over the event log and starts it,
// telling observer of each attempt. Deliveries due from before a restart
// go out at once.
func startWebhooks(cfg config.Config, db *ent.Client, log *slog.Logger, now func() time.Time, random io.Reader, observer webhook.Observer) *webhooks {
	sender := webhook.NewSender(netguard.New(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs}), cfg.WebhookTimeout, log)
	d := webhook.NewDispatcher(webhook.DispatcherOptions{
		DB: db, Sender: sender, Schedule: cfg.WebhookRetry, Now: now, Logger: log, Observer: observer,
	})
	ctx, stop := context.WithCancel(context.Background())
	w := &webhooks{
		deliveries: webhook.NewDeliveryLog(db, now, random, d),
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
