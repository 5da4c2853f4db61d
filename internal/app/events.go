package app

import (
	"io"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/sessions"
)

// openEvents builds the event log, the bus over it, and the sink the
// session manager and the messaging service publish through. Close closes
// them after the manager has stopped, so no event is refused on the way
// down.
// The webhook dispatcher is built in between (startWebhooks): it delivers
// from the log, and the sink wakes it after each commit.
func (a *App) openEvents(now func() time.Time, random io.Reader) {
	a.eventLog = events.NewLog(a.db, events.LogOptions{Now: now, Random: random, Logger: a.log})
	a.bus = events.NewBus(a.eventLog, events.BusOptions{Buffer: a.eventBuf, Observer: a.metrics, Stored: a.metrics})
}

// openSink builds the sink, once the dispatcher it wakes exists.
func (a *App) openSink() {
	a.sink = sessions.NewSink(sessions.SinkOptions{
		Bus: a.bus, MediaPath: graph.MediaPath, Waker: a.hooks.dispatcher, Logger: a.log,
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
	if a.bus != nil {
		a.bus.Close()
	}
	if a.eventLog != nil {
		_ = a.eventLog.Close()
	}
}

// Bus is the event bus: end-to-end tests read how many subscribers it has.
func (a *App) Bus() *events.Bus { return a.bus }
