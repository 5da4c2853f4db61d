package events

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entevent "github.com/wagraph/wagraph/ent/event"
	"github.com/wagraph/wagraph/ent/predicate"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/webhook/route"
)

// Bounds of the log.
const (
	DefaultMaxBatch = 256 // events per transaction
	MaxPage         = 1000
	defaultPage     = 100
	// commitTimeout bounds one batch's transaction: it runs for all of its
	// callers, so no caller's context may cancel it, yet a stuck database
	// must not hold every publisher forever.
	commitTimeout = 30 * time.Second
	// bulkRows keeps one INSERT under SQLite's bound on bound variables
	// (32766): events have 6 columns, deliveries 9.
	bulkRows = 1000
)

// ErrClosed is the error of an Append after Close.
var ErrClosed = errors.New("event log closed")

// New is an event to append: its kind and its data, a JSON object (nil is
// written as {}).
type New struct {
	Kind Kind
	Data json.RawMessage
	// Key, when set, names the WhatsApp item the event stems from, unique
	// within the session ("inbound-message.upsert/<chat>/<id>"). An append
	// whose key the session's log already holds writes nothing for it and
	// returns the stored envelope, marked Existing: WhatsApp re-sends what
	// was not acknowledged, and the re-sent item is the same event.
	Key string
	// Webhooks, when not nil, are the ids of the session's webhooks the
	// event is delivered to, exactly: enabled or not, whatever they
	// selected (testWebhook). An id that is not a webhook of the session
	// gets no delivery. Nil is the rule (internal/webhook/route): every
	// enabled webhook of the session that selected the kind (never for
	// webhook.test).
	Webhooks []string
}

// LogOptions are the dependencies and bounds of a Log. Zero values take the
// defaults.
type LogOptions struct {
	Now    func() time.Time // the clock of envelope timestamps and ids; nil: time.Now
	Random io.Reader        // the randomness of ids; nil: crypto/rand
	Logger *slog.Logger     // nil discards
	// MaxBatch bounds the events of one transaction; an Append bigger than
	// that is still one transaction of its own.
	MaxBatch int
	// MaxWait is how long a batch that is not full waits for more appends
	// before it commits. Zero commits at once: appends that arrive while a
	// transaction runs still share the next one (group commit), so batching
	// needs no wait under load and an idle log adds no latency.
	MaxWait time.Duration
}

// Stats counts what a Log has written since it was made.
type Stats struct {
	Batches int64 // committed transactions
	Events  int64 // committed events
}

// Log is the durable event log. Appends of every session are handed to one
// goroutine (owned by the Log, ended by Close) that writes them in batches:
// one transaction per batch, seq assigned in commit order.
type Log struct {
	db       *ent.Client
	now      func() time.Time
	random   io.Reader // read only by the batching goroutine
	log      *slog.Logger
	maxBatch int
	maxWait  time.Duration
	dialect  string // learnt by lockSessions; read and written by the batching goroutine only

	mu      sync.Mutex
	pending []*request
	closed  bool
	wake    chan struct{} // capacity 1: "pending has grown"
	quit    chan struct{} // closed by Close
	done    chan struct{} // closed when the batching goroutine returns

	batches, events atomic.Int64

	// committed, when set (by a Bus), is called by the batching goroutine
	// with the envelopes of each append right after their commit, in commit
	// order: the one place that sees every session's events in seq order.
	committed atomic.Pointer[func([]Envelope)]
}

// request is one Append waiting for its batch.
type request struct {
	ctx       context.Context
	sessionID string
	evs       []New
	// build, when set, writes what the events imply in the batch's
	// transaction and returns them (AppendWith); evs is then what it
	// returned last, size its events' count for the batch's bound.
	build  Build
	size   int
	result chan result // capacity 1: the batch never waits for the caller
}

// Build writes, in the transaction of the batch that stores them, what a
// session's events imply elsewhere in the database (the message and chat
// stores), and returns the events to store. It may run more than once for
// one append (a batch that fails is written again an append at a time),
// each time in a new transaction: whatever it remembers outside the
// database must wait for the commit (tx.OnCommit).
type Build func(ctx context.Context, tx *ent.Tx) ([]New, error)

// buildError is a Build's failure: the batch is written again without the
// append it failed, which alone gets the error.
type buildError struct{ err error }

func (e *buildError) Error() string { return e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

type result struct {
	envs []Envelope
	err  error
}

// NewLog returns a Log writing to db and starts its batching goroutine;
// Close stops it.
func NewLog(db *ent.Client, opts LogOptions) *Log {
	l := &Log{
		db: db, now: opts.Now, random: opts.Random, log: opts.Logger,
		maxBatch: opts.MaxBatch, maxWait: opts.MaxWait,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.random == nil {
		l.random = rand.Reader
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.maxBatch <= 0 {
		l.maxBatch = DefaultMaxBatch
	}
	go l.run()
	return l
}

// Close stops taking appends, commits those already taken, and returns when
// the batching goroutine has ended.
func (l *Log) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.quit)
	}
	l.mu.Unlock()
	<-l.done
	return nil
}

// Stats returns the counts of what the log committed.
func (l *Log) Stats() Stats {
	return Stats{Batches: l.batches.Load(), Events: l.events.Load()}
}

// Append stores evs of a session, in order, and returns their envelopes
// once they are committed, together with one delivery row per enabled
// webhook of the session that selected the kind (webhook.test is never fanned
// out). The events of one Append are all stored or none. An error means they
// are not known to be stored: a context that ends while the batch commits
// returns its error though the events may be stored, so a retry can store
// them twice (delivery is at least once).
func (l *Log) Append(ctx context.Context, sessionID string, evs []New) ([]Envelope, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	if err := validate(sessionID, evs); err != nil {
		return nil, err
	}
	return l.enqueue(&request{ctx: ctx, sessionID: sessionID, evs: evs, size: len(evs), result: make(chan result, 1)})
}

// AppendWith is Append of the events build returns, run in the batch's
// transaction: what build writes commits with the events, or neither
// does, and the writes of a whole batch of appends share one commit.
// size is about how many events build returns (the batch's bound counts
// it).
func (l *Log) AppendWith(ctx context.Context, sessionID string, size int, build Build) ([]Envelope, error) {
	return l.enqueue(&request{ctx: ctx, sessionID: sessionID, build: build, size: max(size, 1), result: make(chan result, 1)})
}

// validate checks the events of an append: known kinds, JSON data.
func validate(sessionID string, evs []New) error {
	for i, ev := range evs {
		if !ev.Kind.IsKnown() {
			return fmt.Errorf("append to session %s: event %d: unknown kind %q", sessionID, i, ev.Kind)
		}
		if len(ev.Data) > 0 && !json.Valid(ev.Data) {
			return fmt.Errorf("append to session %s: event %d (%s): data is not valid JSON", sessionID, i, ev.Kind)
		}
	}
	return nil
}

// enqueue hands req to the batching goroutine and waits for its result.
func (l *Log) enqueue(req *request) ([]Envelope, error) {
	ctx, sessionID := req.ctx, req.sessionID
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, fmt.Errorf("append to session %s: %w", sessionID, ErrClosed)
	}
	l.pending = append(l.pending, req)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // already signalled
	}
	select {
	case r := <-req.result:
		return r.envs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run is the batching goroutine: it takes what is pending, up to maxBatch
// events, waits up to maxWait for more when the batch is not full, commits,
// and repeats until Close and nothing is pending.
func (l *Log) run() {
	defer close(l.done)
	for {
		batch, n, closed := l.take(nil, 0)
		if len(batch) == 0 {
			if closed {
				return
			}
			select {
			case <-l.wake:
			case <-l.quit:
			}
			continue
		}
		if l.maxWait > 0 && n < l.maxBatch && !closed {
			batch = l.linger(batch, n)
		}
		l.commit(batch)
	}
}

// linger adds appends arriving within maxWait to a batch that is not full.
func (l *Log) linger(batch []*request, n int) []*request {
	timer := time.NewTimer(l.maxWait)
	defer timer.Stop()
	for n < l.maxBatch {
		select {
		case <-timer.C:
			return batch
		case <-l.quit:
			return batch
		case <-l.wake:
			batch, n, _ = l.take(batch, n)
		}
	}
	return batch
}

// take moves pending requests to batch (holding n events) while they fit in
// maxBatch; the first request of a batch always fits. Requests whose caller
// has gone are answered and dropped, never written.
func (l *Log) take(batch []*request, n int) ([]*request, int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for ; i < len(l.pending); i++ {
		r := l.pending[i]
		if err := r.ctx.Err(); err != nil {
			r.result <- result{err: err}
			continue
		}
		if len(batch) > 0 && n+r.size > l.maxBatch {
			break
		}
		batch = append(batch, r)
		n += r.size
	}
	l.pending = slices.Delete(l.pending, 0, i)
	if len(l.pending) > 0 {
		// Left over for the next batch: run must not sleep on wake.
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	return batch, n, l.closed
}

// commit writes a batch in one transaction and answers every caller in it:
// their envelopes, or the batch's error for all of them.
func (l *Log) commit(batch []*request) {
	envs, err := l.write(batch)
	var be *buildError
	if err != nil && len(batch) > 1 && (ent.IsConstraintError(err) || errors.As(err, &be)) {
		// One append can fail a whole batch (its session was deleted
		// meanwhile: the foreign key refuses its events; its Build
		// failed); the others must not fail with it, so each goes again
		// alone.
		for _, r := range batch {
			l.commit([]*request{r})
		}
		return
	}
	if err != nil {
		l.log.Error("event log: batch not stored", "appends", len(batch), "error", err)
		for _, r := range batch {
			r.result <- result{err: fmt.Errorf("append to session %s: %w", r.sessionID, err)}
		}
		return
	}
	// Counted before any caller is answered: a caller that reads Stats
	// after its append returned sees its own commit.
	fresh := make([][]Envelope, len(batch))
	total := 0
	for i := range batch {
		// An envelope found under its key was handed out when it was
		// stored: only the new ones go to the subscribers.
		fresh[i] = slices.DeleteFunc(slices.Clone(envs[i]), func(e Envelope) bool { return e.Existing })
		total += len(fresh[i])
	}
	l.batches.Add(1)
	l.events.Add(int64(total))
	committed := l.committed.Load()
	for i, r := range batch {
		if committed != nil && len(fresh[i]) > 0 {
			(*committed)(fresh[i])
		}
		r.result <- result{envs: envs[i]}
	}
}

// write stores the batch: envs[i] are the envelopes of batch[i].
//
// seq is max(seq)+1 of the session read inside the write transaction, and
// must be gap-free, unique and in commit order (a reader following seq
// never sees a later seq commit before an earlier one). On SQLite the
// transaction already serialises: _txlock=immediate takes the single write
// lock at BEGIN. On PostgreSQL, where several writers (processes) run at
// once, the transaction first locks the batch's session rows (lockSessions):
// a second writer of a session waits there until the first commits, then
// reads the max it committed. The unique (session_id, seq) index stays as
// the backstop. A unique index with a retry instead would keep seq unique,
// not in commit order: a subscriber past seq 6 would miss a 5 committed
// after it.
func (l *Log) write(batch []*request) ([][]Envelope, error) {
	now := l.now().UTC().Truncate(time.Millisecond) // the wire's precision, so a replay equals the live envelope
	envs := make([][]Envelope, len(batch))
	var sessions []string
	for i, r := range batch {
		if !slices.Contains(sessions, r.sessionID) {
			sessions = append(sessions, r.sessionID)
		}
		if r.build == nil {
			var err error
			if envs[i], err = l.envelopes(r, now); err != nil {
				return nil, err
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	err := ent.WithTx(ctx, l.db, func(tx *ent.Tx) error {
		if err := l.lockSessions(ctx, tx, sessions); err != nil {
			return err
		}
		// What the appends imply is written first, under the session
		// locks, in append order: as if each came alone.
		for i, r := range batch {
			if r.build == nil {
				continue
			}
			evs, err := r.build(ctx, tx)
			if err == nil {
				err = validate(r.sessionID, evs)
			}
			if err != nil {
				return &buildError{fmt.Errorf("append to session %s: %w", r.sessionID, err)}
			}
			r.evs = evs
			if envs[i], err = l.envelopes(r, now); err != nil {
				return err
			}
		}
		next, err := l.lastSeqs(ctx, tx, sessions)
		if err != nil {
			return err
		}
		stored, err := storedKeys(ctx, tx, batch)
		if err != nil {
			return err
		}
		var rows []*ent.EventCreate
		for i, r := range batch {
			for j, ev := range r.evs {
				e := &envs[i][j]
				if ev.Key != "" {
					k := sessionKey{r.sessionID, ev.Key}
					if prev, ok := stored[k]; ok {
						*e = prev
						e.Existing = true
						continue
					}
				}
				next[e.SessionID]++
				e.Seq = next[e.SessionID]
				c := tx.Event.Create().SetID(e.ID).SetSessionID(e.SessionID).SetSeq(e.Seq).
					SetKind(string(e.Kind)).SetTimestamp(e.Timestamp).SetData(e.Data)
				if ev.Key != "" {
					c.SetKey(ev.Key)
					// A second event of the key in this batch is this one.
					stored[sessionKey{r.sessionID, ev.Key}] = *e
				}
				rows = append(rows, c)
			}
		}
		for c := range slices.Chunk(rows, bulkRows) {
			if err := tx.Event.CreateBulk(c...).Exec(ctx); err != nil {
				return fmt.Errorf("insert events: %w", err)
			}
		}
		if err := l.fanOut(ctx, tx, batch, sessions, envs, now); err != nil {
			return err
		}
		return l.notify(ctx, tx, envs)
	})
	if err != nil {
		return nil, err
	}
	return envs, nil
}

// envelopes are the new envelopes of an append's events, each with its
// id, not yet its seq.
func (l *Log) envelopes(r *request, now time.Time) ([]Envelope, error) {
	envs := make([]Envelope, len(r.evs))
	for j, ev := range r.evs {
		id, err := newULID(now, l.random)
		if err != nil {
			return nil, err
		}
		data := ev.Data
		if len(data) == 0 {
			data = json.RawMessage("{}")
		}
		envs[j] = Envelope{ID: "evt_" + id, Kind: ev.Kind, SessionID: r.sessionID, Timestamp: now, Data: data}
	}
	return envs, nil
}

// notify tells the processes following the log (Bus.Follow) which sessions
// the transaction adds to, on PostgreSQL: one notification per session,
// naming its highest new seq. The server delivers them at commit, in commit
// order, and not at all on rollback; a process that was not listening then
// reads the log when it listens again (Bus.FollowAll). SQLite has one
// process, whose bus sees the commits.
func (l *Log) notify(ctx context.Context, tx *ent.Tx, envs [][]Envelope) error {
	if l.dialect != dialect.Postgres {
		return nil
	}
	var order []string
	last := map[string]int64{}
	for _, es := range envs {
		for _, e := range es {
			if e.Existing {
				continue
			}
			if _, ok := last[e.SessionID]; !ok {
				order = append(order, e.SessionID)
			}
			last[e.SessionID] = max(last[e.SessionID], e.Seq)
		}
	}
	if len(order) == 0 {
		return nil
	}
	// One statement for the batch's sessions (a round trip each was the
	// batching goroutine's to wait for, issue 35); the calls run in order.
	var q strings.Builder
	q.WriteString("SELECT ")
	args := []any{NotifyChannel}
	for i, s := range order {
		if i > 0 {
			q.WriteString(", ")
		}
		args = append(args, notifyPayload(s, last[s]))
		fmt.Fprintf(&q, "pg_notify($1, $%d)", len(args))
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("notify the events of sessions %v: %w", order, err)
	}
	return nil
}

// sessionKey is a New.Key within its session.
type sessionKey struct{ session, key string }

// storedKeys returns the stored envelopes of the keys the batch names.
func storedKeys(ctx context.Context, tx *ent.Tx, batch []*request) (map[sessionKey]Envelope, error) {
	var preds []predicate.Event
	for _, r := range batch {
		var keys []string
		for _, ev := range r.evs {
			if ev.Key != "" {
				keys = append(keys, ev.Key)
			}
		}
		if len(keys) > 0 {
			preds = append(preds, entevent.And(entevent.SessionID(r.sessionID), entevent.KeyIn(keys...)))
		}
	}
	out := map[sessionKey]Envelope{}
	if len(preds) == 0 {
		return out, nil
	}
	for c := range slices.Chunk(preds, bulkRows) {
		rows, err := tx.Event.Query().Where(entevent.Or(c...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read stored keys: %w", err)
		}
		for _, row := range rows {
			out[sessionKey{row.SessionID, *row.Key}] = envelopeOf(row)
		}
	}
	return out, nil
}

// lockSessions takes the row locks of the sessions on PostgreSQL, in id
// order so that two writers of the same sessions cannot deadlock. FOR NO
// KEY UPDATE leaves foreign-key checks (KEY SHARE) of other tables' inserts
// free. On SQLite there is nothing to lock (write's comment): the first
// batch learns the dialect and later ones skip the query.
func (l *Log) lockSessions(ctx context.Context, tx *ent.Tx, sessions []string) error {
	if l.dialect == dialect.SQLite {
		return nil
	}
	_, err := tx.Session.Query().Where(entsession.IDIn(slices.Sorted(slices.Values(sessions))...), func(s *sql.Selector) {
		l.dialect = s.Dialect()
		if l.dialect == dialect.Postgres {
			s.For(sql.LockNoKeyUpdate)
		}
	}).Order(ent.Asc(entsession.FieldID)).IDs(ctx)
	if err != nil {
		return fmt.Errorf("lock sessions %v: %w", sessions, err)
	}
	return nil
}

// fanOut stores one pending delivery per event and webhook owed it, due at
// once, in the transaction that stores the events. Which webhooks are owed
// an event is internal/webhook/route's rule; the rows are written here so
// they commit or roll back with the event.
func (l *Log) fanOut(ctx context.Context, tx *ent.Tx, batch []*request, sessions []string, envs [][]Envelope, now time.Time) error {
	var named []string // webhooks some event names explicitly, enabled or not
	for _, r := range batch {
		for _, ev := range r.evs {
			named = append(named, ev.Webhooks...)
		}
	}
	hooks, err := route.Candidates(ctx, tx.Webhook, sessions, named)
	if err != nil {
		return err
	}
	if len(hooks) == 0 {
		return nil
	}
	var rows []*ent.DeliveryCreate
	for i := range envs {
		for j, e := range envs[i] {
			if e.Existing {
				continue // its deliveries were stored with it
			}
			ev := route.Event{SessionID: e.SessionID, Kind: string(e.Kind), Selectable: e.Kind.IsSelectable(), Named: batch[i].evs[j].Webhooks}
			for _, h := range hooks {
				if !route.Owed(h, ev) {
					continue
				}
				id, err := newULID(now, l.random)
				if err != nil {
					return err
				}
				rows = append(rows, tx.Delivery.Create().SetID("dlv_"+id).SetEventID(e.ID).SetWebhookID(h.ID).
					SetStatus(entdelivery.StatusPENDING).SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now))
			}
		}
	}
	for c := range slices.Chunk(rows, bulkRows) {
		if err := tx.Delivery.CreateBulk(c...).Exec(ctx); err != nil {
			return fmt.Errorf("insert deliveries: %w", err)
		}
	}
	return nil
}

// After returns up to limit events of a session with seq above afterSeq, in
// seq order; kinds, when not empty, keeps only those kinds. limit is
// clamped to [1, MaxPage], 0 meaning 100.
func (l *Log) After(ctx context.Context, sessionID string, afterSeq int64, kinds []Kind, limit int) ([]Envelope, error) {
	switch {
	case limit <= 0:
		limit = defaultPage
	case limit > MaxPage:
		limit = MaxPage
	}
	q := l.db.Event.Query().Where(entevent.SessionID(sessionID), entevent.SeqGT(afterSeq))
	if len(kinds) > 0 {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		q.Where(entevent.KindIn(names...))
	}
	rows, err := q.Order(ent.Asc(entevent.FieldSeq)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read events of session %s after %d: %w", sessionID, afterSeq, err)
	}
	out := make([]Envelope, len(rows))
	for i, r := range rows {
		out[i] = envelopeOf(r)
	}
	return out, nil
}

// AfterWithin is After with a bound on the bytes of the events' data: it
// returns the longest run of them, from the first, whose data together
// stay within maxBytes (the first always, whatever its size), and whether
// the log holds more after them. The sizes are read first, without the
// data, so a page of large events is never held whole only to be cut.
func (l *Log) AfterWithin(ctx context.Context, sessionID string, afterSeq int64, kinds []Kind, limit, maxBytes int) (page []Envelope, more bool, err error) {
	limit = min(max(limit, 1), MaxPage)
	var sizes []struct {
		Seq  int64 `json:"seq"`
		Size int64 `json:"size"`
	}
	err = l.db.Event.Query().Where(afterIn(sessionID, afterSeq, kinds)...).
		Where(func(s *sql.Selector) {
			s.AppendSelectExprAs(sql.Expr("LENGTH("+s.C(entevent.FieldData)+")"), "size")
		}).
		Order(ent.Asc(entevent.FieldSeq)).Limit(limit).
		Select(entevent.FieldSeq).Scan(ctx, &sizes)
	if err != nil {
		return nil, false, fmt.Errorf("read event sizes of session %s after %d: %w", sessionID, afterSeq, err)
	}
	if len(sizes) == 0 {
		return nil, false, nil
	}
	n, total := 0, int64(0)
	for _, sz := range sizes {
		if n > 0 && total+sz.Size > int64(maxBytes) {
			break
		}
		total += sz.Size
		n++
	}
	upTo := sizes[n-1].Seq
	rows, err := l.db.Event.Query().Where(afterIn(sessionID, afterSeq, kinds)...).Where(entevent.SeqLTE(upTo)).
		Order(ent.Asc(entevent.FieldSeq)).All(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read events of session %s after %d: %w", sessionID, afterSeq, err)
	}
	page = make([]Envelope, len(rows))
	for i, r := range rows {
		page[i] = envelopeOf(r)
	}
	return page, n < len(sizes) || len(sizes) == limit, nil
}

// afterIn selects a session's events after a seq, of the given kinds (all
// when none).
func afterIn(sessionID string, afterSeq int64, kinds []Kind) []predicate.Event {
	ps := []predicate.Event{entevent.SessionID(sessionID), entevent.SeqGT(afterSeq)}
	if len(kinds) > 0 {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		ps = append(ps, entevent.KindIn(names...))
	}
	return ps
}

// envelopeOf is the envelope a stored event row holds.
func envelopeOf(r *ent.Event) Envelope {
	return Envelope{ID: r.ID, Seq: r.Seq, Kind: Kind(r.Kind), SessionID: r.SessionID,
		Timestamp: r.Timestamp.UTC(), Data: json.RawMessage(r.Data)}
}
