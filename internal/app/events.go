package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/storage"
)

// eventStream is the event log and the bus over it, which the sink the
// session manager and the messaging service publish through writes to.
// Close closes them after the manager has stopped, so no event is refused
// on the way down.
type eventStream struct {
	log      *events.Log
	bus      *events.Bus
	listener *storage.Listener // PostgreSQL's notifications to bus; nil on SQLite
}

// openEvents builds the event log and its bus, counting into counters what
// is stored and who subscribes. The webhook dispatcher is built after them
// (startWebhooks): it delivers from the log, and the sink wakes it after
// each commit.
//
// On PostgreSQL other processes commit events of the same sessions: the bus
// follows the log, and a listener hands it the log's notifications.
func openEvents(cfg config.Config, db *ent.Client, log *slog.Logger, now func() time.Time, random io.Reader, buffer int, counters *metrics.Counters) *eventStream {
	s := &eventStream{log: events.NewLog(db, events.LogOptions{Now: now, Random: random, Logger: log})}
	follow := cfg.Clustered()
	s.bus = events.NewBus(s.log, events.BusOptions{
		Buffer: buffer, Observer: counters, Stored: counters, Follow: follow, Logger: log,
	})
	if !follow {
		return s
	}
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: cfg.DatabaseURL, Channel: events.NotifyChannel,
		Notify: s.bus.Notified, Connected: s.bus.FollowAll, Logger: log,
	})
	if err != nil {
		// The database opened at this URL already: not expected. Local
		// subscribers still get this process's events.
		log.Error("events of other processes will not reach this one's subscribers", "error", err)
		return s
	}
	s.listener = l
	return s
}

// close ends the subscriptions and commits what the log holds.
func (s *eventStream) close() {
	if s.listener != nil {
		s.listener.Close()
	}
	s.bus.Close()
	_ = s.log.Close()
}

// EndStreams ends the event subscriptions when the server begins to stop:
// a stream over SSE is a request in flight, which the shutdown would
// otherwise wait for until its grace ran out.
func (a *App) EndStreams() { a.bus.Close() }

// Bus is the event bus: end-to-end tests read how many subscribers it has.
func (a *App) Bus() *events.Bus { return a.bus }
