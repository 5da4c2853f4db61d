package app

import (
	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/sessions"
)

// openEvents builds the event log, the bus over it, and the sink the
// session manager and the messaging service publish through. Close closes
// them after the manager has stopped, so no event is refused on the way
// down.
func (a *App) openEvents() *sessions.Sink {
	a.eventLog = events.NewLog(a.db, events.LogOptions{Logger: a.log})
	a.bus = events.NewBus(a.eventLog, events.BusOptions{Buffer: a.eventBuf})
	return sessions.NewSink(sessions.SinkOptions{Bus: a.bus, MediaPath: graph.MediaPath, Logger: a.log})
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
