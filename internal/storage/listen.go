package storage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// ListenerName is the application_name of a Listener's connection, so that
// pg_stat_activity tells it from the pool's.
const ListenerName = "wagraph listener"

// Listener bounds: how long the connection may stay silent before a ping
// checks that it is alive (a peer that vanished without closing the socket
// leaves a LISTEN waiting forever, deaf to every notification), and the
// backoff between attempts to reconnect.
const (
	defaultKeepalive  = 30 * time.Second
	minBackoff        = 100 * time.Millisecond
	maxBackoff        = 10 * time.Second
	closeConnTimeout  = 5 * time.Second
	listenStmtTimeout = 30 * time.Second
)

// ListenerOptions say where a Listener listens and whom it tells.
type ListenerOptions struct {
	URL     string // the postgres:// URL of the database (--database-url)
	Channel string // the channel LISTENed to
	// Notify is called with the payload of each notification on Channel,
	// one at a time, in the order the server sends them.
	Notify func(payload string)
	// Connected is called each time LISTEN is in place on a new connection,
	// the first one included, before any notification on it is delivered:
	// notifications sent while there was none were lost, and whoever
	// follows the channel must look at what they would have said. nil: none.
	Connected func()
	Logger    *slog.Logger // nil discards
	// Backoff is the wait before reconnecting after the failures-th failure
	// in a row (failures ≥ 1); nil: from 100 ms, doubling, up to 10 s.
	Backoff func(failures int) time.Duration
	// Keepalive is how long the connection may be silent before a ping;
	// 0 means 30 s.
	Keepalive time.Duration
}

// Listener holds one dedicated connection LISTENing on a channel (pgx, not
// the pool: a pooled connection would be handed to other queries and lose
// its LISTEN) and hands each notification to Notify. It reconnects after any
// error, with backoff, until Close or its context ends. It never logs the
// URL, which may hold a password: it names the database by PostgresWhere.
type Listener struct {
	cfg       *pgx.ConnConfig
	channel   string
	notify    func(string)
	connected func()
	log       *slog.Logger
	where     string
	backoff   func(int) time.Duration
	keepalive time.Duration

	cancel context.CancelFunc
	done   chan struct{}
}

// Listen starts a Listener; it connects in the background (Connected tells
// when it listens) and runs until ctx ends or Close. Only an unreadable URL
// is an error: a server that cannot be reached is retried.
func Listen(ctx context.Context, opts ListenerOptions) (*Listener, error) {
	where := PostgresWhere(opts.URL)
	cfg, err := pgx.ParseConfig(opts.URL)
	if err != nil {
		// pgx's error quotes the URL with its password masked; ours does not quote it.
		return nil, fmt.Errorf("listen on %s: unreadable database URL", where)
	}
	cfg.RuntimeParams["application_name"] = ListenerName
	l := &Listener{
		cfg: cfg, channel: opts.Channel, notify: opts.Notify, connected: opts.Connected,
		log: opts.Logger, where: where, backoff: opts.Backoff, keepalive: opts.Keepalive,
		done: make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.backoff == nil {
		l.backoff = doubling
	}
	if l.keepalive <= 0 {
		l.keepalive = defaultKeepalive
	}
	ctx, l.cancel = context.WithCancel(ctx)
	go l.run(ctx)
	return l, nil
}

// Close stops listening and returns once the connection is closed.
func (l *Listener) Close() {
	l.cancel()
	<-l.done
}

// doubling is the default backoff.
func doubling(failures int) time.Duration {
	d := minBackoff
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

func (l *Listener) run(ctx context.Context) {
	defer close(l.done)
	failures := 0
	for {
		err := l.listen(ctx, func() { failures = 0 })
		if ctx.Err() != nil {
			return
		}
		failures++
		wait := l.backoff(failures)
		l.log.Warn("event listener: connection lost, reconnecting",
			"database", l.where, "channel", l.channel, "failures", failures, "retry_in", wait, "error", err)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// listen runs one connection: connect, LISTEN, then hand notifications on
// until an error. listening is called once LISTEN is in place.
func (l *Listener) listen(ctx context.Context, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), closeConnTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	lctx, cancel := context.WithTimeout(ctx, listenStmtTimeout)
	_, err = conn.Exec(lctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize())
	cancel()
	if err != nil {
		return fmt.Errorf("listen on channel %s: %w", l.channel, err)
	}
	listening()
	l.log.Debug("event listener: listening", "database", l.where, "channel", l.channel)
	if l.connected != nil {
		l.connected()
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, l.keepalive)
		n, err := conn.WaitForNotification(wctx)
		silent := wctx.Err() != nil
		cancel()
		if n != nil && n.Channel == l.channel {
			l.notify(n.Payload)
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !silent || conn.IsClosed() {
			return fmt.Errorf("wait for notifications: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, l.keepalive)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("ping after %s of silence: %w", l.keepalive, err)
		}
	}
}
