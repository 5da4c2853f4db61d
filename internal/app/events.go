package app

import (
	"context"
	"io"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/ingest"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/storage"
)

// openEvents builds the event log, the bus over it, and the sink the
// session manager and the messaging service publish through. Close closes
// them after the manager has stopped, so no event is refused on the way
// down.
// The webhook dispatcher is built in between (startWebhooks): it delivers
// from the log, and the sink wakes it after each commit.
//
// On PostgreSQL other processes commit events of the same sessions: the bus
// follows the log, and a listener hands it the log's notifications.
func (a *App) openEvents(now func() time.Time, random io.Reader) {
	a.eventLog = events.NewLog(a.db, events.LogOptions{Now: now, Random: random, Logger: a.log})
	follow := a.cfg.Clustered()
	a.bus = events.NewBus(a.eventLog, events.BusOptions{
		Buffer: a.eventBuf, Observer: a.metrics, Stored: a.metrics, Follow: follow, Logger: a.log,
	})
	if !follow {
		return
	}
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: a.cfg.DatabaseURL, Channel: events.NotifyChannel,
		Notify: a.bus.Notified, Connected: a.bus.FollowAll, Logger: a.log,
	})
	if err != nil {
		// The database opened at this URL already: not expected. Local
		// subscribers still get this process's events.
		a.log.Error("events of other processes will not reach this one's subscribers", "error", err)
		return
	}
	a.eventListener = l
}

// openSink builds the message store and the sink that records in it,
// once the dispatcher the sink wakes exists; the messaging service is
// built later over the same store.
func (a *App) openSink() {
	a.messageStore = messaging.NewStore(a.db, a.cfg.Clustered())
	a.sink = ingest.NewSink(ingest.SinkOptions{
		Bus: a.bus, Messages: a.messageStore, MediaPath: graph.MediaPath, Waker: a.hooks.dispatcher, Logger: a.log,
	})
}

// endStreams ends the event subscriptions when the server begins to stop:
// a stream over SSE is a request in flight, which the shutdown would
// otherwise wait for until its grace ran out.
func (a *App) endStreams() {
	if a.bus != nil {
		a.bus.Close()
	}
}

// closeEvents ends the subscriptions and commits what the log holds.
func (a *App) closeEvents() {
	if a.eventListener != nil {
		a.eventListener.Close()
	}
	if a.bus != nil {
		a.bus.Close()
	}
	if a.eventLog != nil {
		_ = a.eventLog.Close()
	}
}

// Bus is the event bus: end-to-end tests read how many subscribers it has.
func (a *App) Bus() *events.Bus { return a.bus }
