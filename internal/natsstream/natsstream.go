// Package natsstream is the event stream on NATS JetStream (integrations.md
// §2): every stored event of the sessions this process holds is published
// to a stream, from the durable event log, in seq order per session, at
// least once. The broker deduplicates by the event id (Nats-Msg-Id), so a
// consumer reads the log as it is.
//
// How it keeps those promises:
//   - From the log, never from memory: a cursor per session and stream (the
//     last seq JetStream acknowledged) is stored in the database
//     (ent.StreamCursor), and what lies after it is read from the log
//     (events.Log.AfterWithin) after it was committed. A restart of either
//     side resumes at the cursor.
//   - Order: a session's events are published one at a time, each after
//     the ack of the one before, so the stream holds them in seq order
//     whatever fails between them; several sessions go side by side
//     (workers). A publish whose ack was lost is published again and
//     dropped by the broker as a duplicate (its duplicate window, 2 minutes
//     by default).
//   - Never in anyone's way: the Publisher runs in a goroutine of its own,
//     from Start to Close, woken after commits (Wake) and every second; the
//     event log, the webhooks and the subscriptions never wait for it. The
//     nats.go connection has no reconnect buffer, so a publish while the
//     broker is away fails at once, and the loop waits (backoff, cut short
//     when the connection is back).
//   - In a cluster, the holder of a session's lease publishes it (Held).
//   - The log's retention keeps what the stream has not taken yet, past the
//     retention, for events.StreamHold at most (events.Retention.Stream).
package natsstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/events"
)

// The stream's names and headers (integrations.md §2).
const (
	DefaultStream = "WAGRAPH"
	// Subjects is what the stream must capture: created with it, and an
	// existing stream must cover it.
	Subjects = "wagraph.>"

	HeaderSession = "Wagraph-Session"
	HeaderSeq     = "Wagraph-Seq"
	HeaderEvent   = "Wagraph-Event"
)

// Subject is the subject of a session's event of kind k.
func Subject(sessionID string, k events.Kind) string {
	return "wagraph.events." + sessionID + "." + string(k)
}

// Bounds of the work.
const (
	pageEvents = 256     // events of a session read from the log at once
	pageBytes  = 1 << 20 // and their data's bytes
	workers    = 4       // sessions published side by side
	// publishTimeout bounds one publish, its ack included.
	publishTimeout = 5 * time.Second
	// startTimeout bounds Start's look at the stream.
	startTimeout = 5 * time.Second
	// defaultScan is how often the log is read when nothing woke the
	// loop: events committed by another process, or not through the
	// session sink, wait at most this long.
	defaultScan = time.Second
	linger      = 100 * time.Millisecond
	minBackoff  = 100 * time.Millisecond
	maxBackoff  = 5 * time.Second
	// failureLog spaces the warnings of a failure that lasts.
	failureLog = time.Minute
)

// Log is where the events are read: the event log (events.Log).
type Log interface {
	AfterWithin(ctx context.Context, sessionID string, afterSeq int64, kinds []events.Kind, limit, maxBytes int) ([]events.Envelope, bool, error)
}

// Observer learns what the publisher did (metrics). It must return at once.
type Observer interface {
	StreamPublished()       // one event acknowledged by JetStream
	StreamPublishFailed()   // one publish that failed
	StreamLag(events int64) // events stored and not yet acknowledged, of the sessions held
}

// Options are a Publisher's settings and parts.
type Options struct {
	URL    string // comma-separated nats:// URLs; user:password in them is the credentials
	Creds  string // a credentials file (JWT and NKey seed); "" none
	Stream string // "" is DefaultStream

	DB  *ent.Client
	Log Log
	// Held returns the sessions this process holds (a cluster's node);
	// nil: every session (SQLite: one process).
	Held     func() []string
	Observer Observer // nil: none
	Logger   *slog.Logger
	// Scan is how often the log is read without a Wake; 0 is a second.
	Scan time.Duration
	Now  func() time.Time // the cursor's updated_at; nil: time.Now
}

// Publisher publishes the log to the stream, in its goroutine from Start
// to Close. A nil Publisher (no --nats-url) does nothing.
type Publisher struct {
	opts   Options
	stream string
	log    *slog.Logger
	nc     *nats.Conn
	js     jetstream.JetStream
	ready  bool // the stream was found or made; the loop's alone once it runs

	wake      chan struct{} // capacity 1: commits since the last round
	connected chan struct{} // capacity 1: the connection is back
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	once      sync.Once
}

// Start connects to the broker and starts publishing; with no URL it
// returns nil. A stream that exists with subjects not covering Subjects is
// an error naming it. A broker that cannot be reached is not: it is
// logged, and the publisher waits for it (the events wait in the log).
func Start(ctx context.Context, opts Options) (*Publisher, error) {
	if opts.URL == "" {
		return nil, nil
	}
	if opts.Stream == "" {
		opts.Stream = DefaultStream
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Scan <= 0 {
		opts.Scan = defaultScan
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &Publisher{
		opts: opts, stream: opts.Stream,
		log:  opts.Logger.With("nats_url", Redact(opts.URL), "nats_stream", opts.Stream),
		wake: make(chan struct{}, 1), connected: make(chan struct{}, 1), done: make(chan struct{}),
	}
	nc, err := nats.Connect(opts.URL, append(connectOptions(opts.Creds, startTimeout),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		// No reconnect buffer: a publish while the broker is away fails
		// at once instead of waiting in memory to be sent later, after
		// the loop has moved on (out of order).
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				p.log.Warn("NATS: disconnected; the events wait in the log", "err", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			p.log.Info("NATS: connected again; publishing what waits")
			signal(p.connected)
		}),
		// The first connection, when the broker was away at start.
		nats.ConnectHandler(func(*nats.Conn) {
			p.log.Info("NATS: connected; publishing what waits")
			signal(p.connected)
		}),
	)...)
	if err != nil {
		return nil, fmt.Errorf("NATS at %s: %w", Redact(opts.URL), err)
	}
	p.nc = nc
	if p.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, fmt.Errorf("NATS at %s: %w", Redact(opts.URL), err)
	}
	ready := false
	if nc.IsConnected() {
		sctx, cancel := context.WithTimeout(ctx, startTimeout)
		err := ensureStream(sctx, p.js, p.stream)
		cancel()
		var mismatch *SubjectsError
		switch {
		case errors.As(err, &mismatch):
			nc.Close()
			return nil, err
		case err != nil:
			p.log.Warn("NATS: the stream could not be checked at start; publishing once it can", "err", err)
		default:
			ready = true
		}
	} else {
		p.log.Warn("NATS: the broker cannot be reached at start; publishing once it can", "err", nc.LastError())
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.ready = ready
	go p.run()
	return p, nil
}

// Wake tells the publisher that events were committed.
func (p *Publisher) Wake() {
	if p != nil {
		signal(p.wake)
	}
}

// Stream is the name of the stream published to; "" for a nil Publisher.
// The event log's retention holds back what it has not taken yet
// (events.Retention).
func (p *Publisher) Stream() string {
	if p == nil {
		return ""
	}
	return p.stream
}

// Close stops publishing and closes the connection: what the broker
// acknowledged is saved in the cursors; a publish under way is cut short
// and tried again at the next start.
func (p *Publisher) Close() {
	if p == nil {
		return
	}
	p.once.Do(p.cancel)
	<-p.done
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run is the publisher's loop: a round (read the cursors and the log,
// publish one page of each session behind), again at once while a round
// published something, else after a wake or the scan interval; after a
// failure, after a backoff that a reconnection cuts short.
func (p *Publisher) run() {
	defer close(p.done)
	defer p.nc.Close()
	var (
		fails      int
		lastLogged time.Time
	)
	for {
		published, err := p.round(p.ctx)
		switch {
		case p.ctx.Err() != nil:
			return
		case err != nil:
			// The stream is looked at again before the next round: it
			// may have been deleted, or the broker started afresh.
			p.ready = false
			fails++
			if fails == 1 || time.Since(lastLogged) > failureLog {
				p.log.Warn("NATS: publishing failed; the events wait in the log", "err", err, "failures", fails)
				lastLogged = time.Now()
			}
			if !p.sleep(backoff(fails), false) {
				return
			}
		case published > 0:
			if fails > 0 {
				p.log.Info("NATS: publishing again", "after_failures", fails)
			}
			fails = 0
			// A short pause before the next round lets a burst's
			// commits gather into pages: fewer reads of the log and
			// cursor writes, never a wait for the broker.
			if !p.sleep(linger, false) {
				return
			}
		default:
			fails = 0
			if !p.sleep(p.opts.Scan, true) {
				return
			}
		}
	}
}

// sleep waits d, or less when woken (commits, if wakeable) or reconnected;
// false when the publisher is closing.
func (p *Publisher) sleep(d time.Duration, wakeable bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	wake := p.wake
	if !wakeable {
		wake = nil // a failing broker is not asked again at every commit
	}
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	case <-p.connected:
	}
	return true
}

// backoff is the wait after the n-th failure in a row.
func backoff(n int) time.Duration {
	d := minBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// errAway is a round's error while the connection is down.
var errAway = errors.New("the NATS broker is not connected")

// round publishes one page of each session behind, workers sessions at a
// time, and returns how many events were acknowledged and the first
// error.
func (p *Publisher) round(ctx context.Context) (int, error) {
	behind, lag, err := p.behind(ctx)
	if err != nil {
		return 0, err
	}
	if p.opts.Observer != nil {
		p.opts.Observer.StreamLag(lag)
	}
	if len(behind) == 0 {
		return 0, nil
	}
	if !p.nc.IsConnected() {
		return 0, errAway
	}
	if !p.ready {
		sctx, cancel := context.WithTimeout(ctx, startTimeout)
		err := ensureStream(sctx, p.js, p.stream)
		cancel()
		if err != nil {
			return 0, err
		}
		p.ready = true
	}
	var (
		mu        sync.Mutex
		published int
		first     error
		moved     []cursor // the sessions' new cursors
		wg        sync.WaitGroup
	)
	slots := make(chan struct{}, workers)
	for _, c := range behind {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			done, err := p.publishPage(ctx, c)
			mu.Lock()
			defer mu.Unlock()
			if done > c.seq {
				published += int(done - c.seq)
				moved = append(moved, cursor{c.sessionID, done})
			}
			if err != nil && first == nil {
				first = err
			}
		})
	}
	wg.Wait()
	if len(moved) > 0 {
		// Saved whatever the loop's context (what the broker acknowledged
		// is not published again after a stop), all in one transaction:
		// on SQLite every write waits for the one write lock the event
		// log's batches take too.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
		defer cancel()
		if err := p.save(sctx, moved); err != nil {
			return published, errors.Join(first, err)
		}
	}
	return published, first
}

// publishPage publishes the events of a session after its cursor, one
// page, each after the ack of the one before, and returns the last seq
// acknowledged (c.seq when none was). The events of a session are
// consecutive seqs, so the count is the difference.
func (p *Publisher) publishPage(ctx context.Context, c cursor) (int64, error) {
	page, _, err := p.opts.Log.AfterWithin(ctx, c.sessionID, c.seq, nil, pageEvents, pageBytes)
	if err != nil {
		return c.seq, err
	}
	done := c.seq
	var perr error
	for _, e := range page {
		if err := p.publish(ctx, e); err != nil {
			if ctx.Err() == nil && p.opts.Observer != nil {
				p.opts.Observer.StreamPublishFailed()
			}
			perr = fmt.Errorf("publish event %s (seq %d) of session %s: %w", e.ID, e.Seq, c.sessionID, err)
			break
		}
		if p.opts.Observer != nil {
			p.opts.Observer.StreamPublished()
		}
		done = e.Seq
	}
	return done, perr
}

// publish sends one envelope and waits for JetStream's ack. The body is
// the envelope's JSON, the bytes a webhook gets (events.Envelope's
// MarshalJSON, as the dispatcher encodes it).
func (p *Publisher) publish(ctx context.Context, e events.Envelope) error {
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	msg := nats.NewMsg(Subject(e.SessionID, e.Kind))
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, e.ID)
	msg.Header.Set(HeaderSession, e.SessionID)
	msg.Header.Set(HeaderSeq, strconv.FormatInt(e.Seq, 10))
	msg.Header.Set(HeaderEvent, string(e.Kind))
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	_, err = p.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(p.stream))
	return err
}
