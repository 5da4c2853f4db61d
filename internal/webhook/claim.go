package webhook

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
	entevent "github.com/wagraph/wagraph/ent/event"
	"github.com/wagraph/wagraph/ent/predicate"
	entsession "github.com/wagraph/wagraph/ent/session"
	entwebhook "github.com/wagraph/wagraph/ent/webhook"
)

// waiting selects the PENDING deliveries this dispatcher may take: not one
// of its own in flight, not of a webhook, session or user at its bound.
func waiting(busy []string, full excluded) []predicate.Delivery {
	ps := []predicate.Delivery{entdelivery.StatusEQ(entdelivery.StatusPENDING)}
	if len(busy) > 0 {
		ps = append(ps, entdelivery.IDNotIn(busy...))
	}
	if len(full.webhooks) > 0 {
		ps = append(ps, entdelivery.WebhookIDNotIn(full.webhooks...))
	}
	// The session and the user are the webhook's and its session's: a
	// subquery each (IN (SELECT ...)), which both backends plan on their
	// primary keys, and which PostgreSQL's FOR ... OF deliveries leaves
	// unlocked.
	var hook []predicate.Webhook
	if len(full.sessions) > 0 {
		hook = append(hook, entwebhook.SessionIDNotIn(full.sessions...))
	}
	if len(full.users) > 0 {
		hook = append(hook, entwebhook.HasSessionWith(entsession.OwnerIDNotIn(full.users...)))
	}
	if len(hook) > 0 {
		ps = append(ps, entdelivery.HasWebhookWith(hook...))
	}
	return ps
}

// nextDue returns when the earliest delivery it may take is due; found is
// false when there is none.
func (d *Dispatcher) nextDue(ctx context.Context, busy []string, full excluded) (next time.Time, found bool, err error) {
	row, err := d.db.Delivery.Query().Where(waiting(busy, full)...).
		Order(ent.Asc(entdelivery.FieldNextAttemptAt)).
		Select(entdelivery.FieldNextAttemptAt).First(ctx)
	if ent.IsNotFound(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the next due delivery: %w", err)
	}
	return row.NextAttemptAt, true, nil
}

// claimWindow is how many due deliveries a claim reads per free slot: the
// oldest due rows are often one session's backlog, and a wider read lets
// other sessions' deliveries share the pass (fairOrder). A session or user
// at its bound is left out of the read itself, so the next pass reaches
// the others whatever the window.
const claimWindow = 4

// claim takes up to limit deliveries due at now, shared between the users
// and sessions that have some due (fairOrder; inflight: the attempts in
// flight), and calls took for each one won, once the claims are committed.
//
// A claim is a conditional UPDATE that pushes next_attempt_at past the
// lease, so two claimers (goroutines or processes) cannot both win a row,
// and a claimer that dies mid-attempt leaves its row due again when the
// lease ends: the attempt is made again, at least once. On PostgreSQL the
// candidates' SELECT locks their rows and skips those another claimer has
// locked (lockCandidates), so claimers do not queue on each other's rows.
//
// contended reports that no candidate was readable because every due row
// was locked by another transaction (PostgreSQL only): a claimer mid-claim
// will push them out of reach, but until it commits nextDue still sees
// them due, so claiming again at once would spin. On SQLite an empty read
// means another claimer committed since nextDue, whose next read is then
// right, so contended is never set there.
func (d *Dispatcher) claim(ctx context.Context, now time.Time, busy []string, full excluded, limit int,
	inflight load, took func(id string, o owner)) (won []*ent.Delivery, contended bool, err error) {
	now = now.UTC()
	until := now.Add(d.lease)
	var locking bool
	lock := func(s *sql.Selector) { locking = lockCandidates(s) }
	// One transaction for the read and every claim: one SQLite write lock
	// for the lot, where an UPDATE each made the dispatcher queue on the
	// lock against the event log's writer once per delivery. The
	// candidates are read alone, their owners (webhook, session, user)
	// taken from what the dispatcher remembers (owners), all claimed in
	// one UPDATE, and the webhooks and events of those won read after:
	// the attempt needs them, and reading them now saves two queries per
	// attempt.
	err = ent.WithTx(ctx, d.db, func(tx *ent.Tx) error {
		won, contended = nil, false
		candidates, err := tx.Delivery.Query().
			Where(append(waiting(busy, full), entdelivery.NextAttemptAtLTE(now), lock)...).
			Order(ent.Asc(entdelivery.FieldNextAttemptAt), ent.Asc(entdelivery.FieldID)).
			Limit(limit * claimWindow).All(ctx)
		if err != nil {
			return fmt.Errorf("read due deliveries: %w", err)
		}
		contended = locking && len(candidates) == 0
		if err := d.owners.attach(ctx, tx, candidates); err != nil {
			return err
		}
		picked := fairOrder(candidates, limit, inflight, d.bounds)
		if won, err = claimRows(ctx, tx, picked, now, until); err != nil {
			return err
		}
		if err := loadWebhooks(ctx, tx, won); err != nil {
			return err
		}
		return loadEvents(ctx, tx, won)
	})
	if err != nil {
		return nil, false, err // rolled back: nothing was claimed
	}
	for _, c := range won {
		took(c.ID, ownerOf(c))
	}
	return won, contended, nil
}

// claimRows claims picked in one UPDATE and returns those it won. Its
// conditions (still PENDING, still due) are what make a claim single on
// SQLite; on PostgreSQL the candidates' row locks already exclude other
// claimers. Within the claim's transaction (SQLite's write lock taken at
// BEGIN, or PostgreSQL's row locks) no row read can change before the
// UPDATE, so it wins them all; should it not, the rows carrying this
// claim's lease are read back.
func claimRows(ctx context.Context, tx *ent.Tx, picked []*ent.Delivery, now, until time.Time) ([]*ent.Delivery, error) {
	if len(picked) == 0 {
		return nil, nil
	}
	ids := make([]string, len(picked))
	for i, c := range picked {
		ids[i] = c.ID
	}
	n, err := tx.Delivery.Update().
		Where(entdelivery.IDIn(ids...), entdelivery.StatusEQ(entdelivery.StatusPENDING), entdelivery.NextAttemptAtLTE(now)).
		SetNextAttemptAt(until).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries %v: %w", ids, err)
	}
	ours := picked
	if n != len(picked) {
		got, err := tx.Delivery.Query().
			Where(entdelivery.IDIn(ids...), entdelivery.StatusEQ(entdelivery.StatusPENDING), entdelivery.NextAttemptAt(until)).IDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the deliveries claimed: %w", err)
		}
		ours = slices.DeleteFunc(slices.Clone(picked), func(c *ent.Delivery) bool { return !slices.Contains(got, c.ID) })
	}
	for _, c := range ours {
		c.NextAttemptAt = until
	}
	return ours, nil
}

// loadWebhooks sets the webhook of each delivery of won, in one query, in
// place of the owner alone that attach set: the attempt needs its URL,
// secret and state as they are now. The owner (ownerOf) is kept.
func loadWebhooks(ctx context.Context, tx *ent.Tx, won []*ent.Delivery) error {
	if len(won) == 0 {
		return nil
	}
	var ids []string
	for _, c := range won {
		if !slices.Contains(ids, c.WebhookID) {
			ids = append(ids, c.WebhookID)
		}
	}
	hooks, err := tx.Webhook.Query().Where(entwebhook.IDIn(ids...)).All(ctx)
	if err != nil {
		return fmt.Errorf("read the claimed deliveries' webhooks: %w", err)
	}
	byID := make(map[string]*ent.Webhook, len(hooks))
	for _, h := range hooks {
		byID[h.ID] = h
	}
	for _, c := range won {
		h := byID[c.WebhookID]
		if h == nil {
			// Deleted meanwhile: the attempt reads the delivery again
			// and finds it gone.
			c.Edges.Webhook = nil
			continue
		}
		if c.Edges.Webhook != nil {
			h.Edges.Session = c.Edges.Webhook.Edges.Session
		}
		c.Edges.Webhook = h
	}
	return nil
}

// owners remembers each webhook's session and that session's user, which
// never change (both fields are immutable in ent/schema): the claim pass
// needs them for every candidate it reads (fairOrder), and read with every
// pass they cost more than the rest of the pass. It is bounded: past
// maxOwners webhooks it starts over.
type owners struct {
	mu sync.Mutex
	m  map[string]*ent.Webhook // webhook id → the webhook's id, session id and session (id, owner id) only
}

const maxOwners = 1 << 14

// attach sets each candidate's webhook edge to its owner-only webhook
// (ownerOf reads it), reading those not yet known in one query. A webhook
// not found (deleted meanwhile) leaves the edge unset.
func (o *owners) attach(ctx context.Context, tx *ent.Tx, candidates []*ent.Delivery) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var missing []string
	for _, c := range candidates {
		if _, ok := o.m[c.WebhookID]; !ok && !slices.Contains(missing, c.WebhookID) {
			missing = append(missing, c.WebhookID)
		}
	}
	if len(missing) > 0 {
		hooks, err := tx.Webhook.Query().Where(entwebhook.IDIn(missing...)).
			Select(entwebhook.FieldID, entwebhook.FieldSessionID).
			WithSession(func(q *ent.SessionQuery) { q.Select(entsession.FieldID, entsession.FieldOwnerID) }).All(ctx)
		if err != nil {
			return fmt.Errorf("read the owners of webhooks %v: %w", missing, err)
		}
		if o.m == nil || len(o.m)+len(hooks) > maxOwners {
			o.m = make(map[string]*ent.Webhook, len(hooks))
		}
		for _, h := range hooks {
			o.m[h.ID] = &ent.Webhook{ID: h.ID, SessionID: h.SessionID, Edges: ent.WebhookEdges{Session: h.Edges.Session}}
		}
	}
	for _, c := range candidates {
		c.Edges.Webhook = o.m[c.WebhookID]
	}
	return nil
}

// loadEvents sets the event of each delivery of won, in one query.
func loadEvents(ctx context.Context, tx *ent.Tx, won []*ent.Delivery) error {
	if len(won) == 0 {
		return nil
	}
	ids := make([]string, 0, len(won))
	for _, c := range won {
		ids = append(ids, c.EventID)
	}
	evs, err := tx.Event.Query().Where(entevent.IDIn(ids...)).All(ctx)
	if err != nil {
		return fmt.Errorf("read the claimed deliveries' events: %w", err)
	}
	byID := make(map[string]*ent.Event, len(evs))
	for _, e := range evs {
		byID[e.ID] = e
	}
	// An event missing (deleted meanwhile) leaves the edge unset: the
	// attempt reads the delivery again and finds it gone.
	for _, c := range won {
		c.Edges.Event = byID[c.EventID]
	}
	return nil
}

// lockCandidates, a predicate in form only, makes the candidates' SELECT
// lock its rows FOR NO KEY UPDATE SKIP LOCKED on PostgreSQL, and reports
// whether it did. Without it, two claimers reading the same earliest rows
// would both UPDATE them: the second would wait on the first's row locks
// until its commit, then find them claimed (the conditional UPDATE stays
// the backstop) and claim nothing that round, so claimers would take turns
// instead of sharing the outbox. SKIP LOCKED hands each claimer rows no
// other is claiming. NO KEY UPDATE is the lock the claim's UPDATE takes
// anyway (it changes no key): it excludes other claimers, yet lets the
// recorder insert an attempt row referencing the delivery, whose foreign
// key check takes KEY SHARE, which FOR UPDATE would block. The lock names
// the deliveries table alone (OF): the event and webhook read with the
// candidates are eager loads, separate SELECTs that lock nothing, and a
// JOIN added to this query one day must not lock the webhook row every
// claimer reads. SQLite has no row locks (its one writer lock serialises
// claimers) and ent refuses FOR there, so its query is unchanged.
func lockCandidates(s *sql.Selector) bool {
	if s.Dialect() != dialect.Postgres {
		return false
	}
	s.For(sql.LockNoKeyUpdate, sql.WithLockTables(s.TableName()), sql.WithLockAction(sql.SkipLocked))
	return true
}

// release gives a claimed delivery back, due at once, without counting an
// attempt: the attempt was cut short by the dispatcher stopping, not
// answered by the receiver. It holds only while the claim is this
// dispatcher's (the row still carries its lease).
func (d *Dispatcher) release(ctx context.Context, dlv *ent.Delivery) error {
	_, err := d.db.Delivery.Update().
		Where(entdelivery.ID(dlv.ID), entdelivery.StatusEQ(entdelivery.StatusPENDING),
			entdelivery.Attempts(dlv.Attempts), entdelivery.NextAttemptAt(dlv.NextAttemptAt)).
		SetNextAttemptAt(d.now().UTC()).Save(ctx)
	if err != nil {
		return fmt.Errorf("release delivery %s: %w", dlv.ID, err)
	}
	return nil
}
