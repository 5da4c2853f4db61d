package app

import "github.com/wagraph/wagraph/internal/events"

// EndStreams ends the event subscriptions when the server begins to stop:
// a stream over SSE is a request in flight, which the shutdown would
// otherwise wait for until its grace ran out.
func (a *App) EndStreams() { a.bus.Close() }

// Bus is the event bus: end-to-end tests read how many subscribers it has.
func (a *App) Bus() *events.Bus { return a.bus }
