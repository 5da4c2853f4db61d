package webhook

import (
	"context"
	"io"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/netguard"
)

// Outbox is the webhook outbox as a server runs it: the dispatcher, in a
// goroutine of its own from StartOutbox until Close, and the log of its
// deliveries.
type Outbox struct {
	Deliveries *DeliveryLog
	Dispatcher *Dispatcher
	sender     *Sender
	stop       context.CancelFunc
	done       chan struct{} // closed when the dispatcher's Run has returned
}

// OutboxOptions are the dispatcher's options (Sender is made from
// AllowPrivate and Timeout) and the randomness of redeliveries' ids.
type OutboxOptions struct {
	Dispatcher   DispatcherOptions
	AllowPrivate bool          // receivers on private addresses (tests, sandbox)
	Timeout      time.Duration // of one attempt: --webhook-timeout
	Random       io.Reader
}

// StartOutbox builds the dispatcher over the event log of db and starts it.
// Deliveries due from before a restart go out at once.
func StartOutbox(db *ent.Client, opts OutboxOptions) *Outbox {
	d := opts.Dispatcher
	d.DB = db
	d.Sender = NewSender(netguard.New(netguard.Options{AllowPrivate: opts.AllowPrivate}), opts.Timeout, d.Logger)
	dispatcher := NewDispatcher(d)
	ctx, stop := context.WithCancel(context.Background())
	o := &Outbox{
		Deliveries: NewDeliveryLog(db, d.Now, opts.Random, dispatcher),
		Dispatcher: dispatcher, sender: d.Sender, stop: stop, done: make(chan struct{}),
	}
	go func() {
		defer close(o.done)
		dispatcher.Run(ctx)
	}()
	return o
}

// Close stops the dispatcher (attempts in flight are given back, due at
// the next start); the database is still open.
func (o *Outbox) Close() {
	o.stop()
	<-o.done
	o.sender.Close()
}
