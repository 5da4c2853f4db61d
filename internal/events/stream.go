package events

import (
	"context"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/storage"
)

// Stream is the event log and the bus over it, as a server runs them.
type Stream struct {
	Log      *Log
	Bus      *Bus
	listener *storage.Listener // PostgreSQL's notifications to Bus; nil on SQLite
}

// StreamOptions are a Stream's log and bus options; Follow (the bus's) is
// set when DatabaseURL names PostgreSQL.
type StreamOptions struct {
	Log LogOptions
	Bus BusOptions
	// DatabaseURL is the PostgreSQL database of a cluster, where other
	// processes commit events of the same sessions: the bus follows the
	// log, and a listener on it hands the bus the log's notifications.
	// "" on SQLite.
	DatabaseURL string
}

// OpenStream builds the event log over db and its bus. A listener that
// cannot start is logged: the database opened at this URL already, and
// local subscribers still get this process's events.
func OpenStream(db *ent.Client, opts StreamOptions) *Stream {
	s := &Stream{Log: NewLog(db, opts.Log)}
	opts.Bus.Follow = opts.DatabaseURL != ""
	s.Bus = NewBus(s.Log, opts.Bus)
	if !opts.Bus.Follow {
		return s
	}
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: opts.DatabaseURL, Channel: NotifyChannel,
		Notify: s.Bus.Notified, Connected: s.Bus.FollowAll, Logger: opts.Bus.Logger,
	})
	if err != nil {
		if lg := opts.Bus.Logger; lg != nil {
			lg.Error("events of other processes will not reach this one's subscribers", "error", err)
		}
		return s
	}
	s.listener = l
	return s
}

// Close ends the subscriptions and commits what the log holds.
func (s *Stream) Close() {
	if s.listener != nil {
		s.listener.Close()
	}
	s.Bus.Close()
	_ = s.Log.Close()
}
