package webhook

import (
	"github.com/wagraph/wagraph/ent"
)

// Fairness of the dispatcher's slots. The attempts in flight are bounded
// per webhook, per session and per user, and the slots that free up go to
// the least served user, then session, first: oldest first alone let one
// user's burst to a receiver that never answers (40 webhooks, a tarpit)
// take every slot, and another user's delivery waited for the tarpit's
// timeouts (issue 21, finding 5: 0.07 s became 122 s).

// bounds are the attempts one webhook, one session and one user may have
// in flight in one dispatcher.
type bounds struct{ webhook, session, user int }

// defaultBounds completes b from the overall bound: zero values take the
// defaults, and none is above the overall bound. A session's default is a
// quarter of the slots, but at least twice a webhook's bound, so a dead
// webhook never holds all its session's slots; a user's is half of them,
// but at least a session's.
func defaultBounds(concurrency int, b bounds) bounds {
	if b.webhook <= 0 {
		b.webhook = DefaultPerWebhook
	}
	b.webhook = min(b.webhook, concurrency)
	if b.session <= 0 {
		b.session = max(1, concurrency/4, min(2*b.webhook, concurrency))
	}
	b.session = min(b.session, concurrency)
	if b.user <= 0 {
		b.user = max(1, concurrency/2, b.session)
	}
	b.user = min(b.user, concurrency)
	return b
}

// owner is what an attempt in flight holds a share of.
type owner struct{ webhook, session, user string }

// ownerOf is the owner of a delivery read with its webhook and the
// webhook's session. A session missing from the read (deleted meanwhile)
// counts as a user of its own: the delivery is gone with it anyway.
func ownerOf(d *ent.Delivery) owner {
	o := owner{webhook: d.WebhookID}
	if h := d.Edges.Webhook; h != nil {
		o.session = h.SessionID
		if s := h.Edges.Session; s != nil {
			o.user = s.OwnerID
		}
	}
	if o.user == "" {
		o.user = "session:" + o.session
	}
	return o
}

// load counts attempts in flight by webhook, session and user.
type load struct{ webhooks, sessions, users map[string]int }

func newLoad() load {
	return load{webhooks: map[string]int{}, sessions: map[string]int{}, users: map[string]int{}}
}

func (l load) add(o owner, n int) {
	for _, c := range []struct {
		m   map[string]int
		key string
	}{{l.webhooks, o.webhook}, {l.sessions, o.session}, {l.users, o.user}} {
		if c.m[c.key] += n; c.m[c.key] <= 0 {
			delete(c.m, c.key)
		}
	}
}

// room reports whether o may start another attempt under b.
func (l load) room(o owner, b bounds) bool {
	return l.webhooks[o.webhook] < b.webhook && l.sessions[o.session] < b.session && l.users[o.user] < b.user
}

// excluded are the webhooks, sessions and users at their bound: their
// deliveries are not read until one of their attempts ends.
type excluded struct{ webhooks, sessions, users []string }

// flight is the attempts in flight, kept by Run's goroutine alone.
type flight struct {
	ids map[string]owner // delivery id → its owner
	load
}

func newFlight() *flight { return &flight{ids: map[string]owner{}, load: newLoad()} }

func (f *flight) add(id string, o owner) { f.ids[id] = o; f.load.add(o, 1) }

func (f *flight) remove(id string) {
	o, ok := f.ids[id]
	if !ok {
		return
	}
	delete(f.ids, id)
	f.load.add(o, -1)
}

func (f *flight) deliveryIDs() []string {
	out := make([]string, 0, len(f.ids))
	for id := range f.ids {
		out = append(out, id)
	}
	return out
}

// full lists what is at its bound.
func (f *flight) full(b bounds) excluded {
	atBound := func(m map[string]int, bound int) []string {
		var out []string
		for k, n := range m {
			if n >= bound {
				out = append(out, k)
			}
		}
		return out
	}
	return excluded{webhooks: atBound(f.webhooks, b.webhook), sessions: atBound(f.sessions, b.session), users: atBound(f.users, b.user)}
}

// fairOrder picks up to limit of the candidates (due, oldest first) to
// claim, in the order to claim them: each pick goes to the user with the
// fewest attempts in flight (inflight, plus those picked before), among its
// sessions to the one with the fewest, and within a session to its oldest
// delivery whose webhook has room; ties go to the oldest. Nothing picked
// takes a webhook, session or user past its bound. So a pass shares the
// free slots round-robin between the users and sessions that have
// deliveries due, however old one's backlog is.
func fairOrder(candidates []*ent.Delivery, limit int, inflight load, b bounds) []*ent.Delivery {
	type queue struct {
		who  owner // session and user; webhook unset
		rows []*ent.Delivery
	}
	var queues []*queue // by their oldest delivery
	bySession := map[string]*queue{}
	for _, c := range candidates {
		o := ownerOf(c)
		q := bySession[o.session]
		if q == nil {
			q = &queue{who: owner{session: o.session, user: o.user}}
			bySession[o.session] = q
			queues = append(queues, q)
		}
		q.rows = append(q.rows, c)
	}
	// taken counts the picks of this pass; a count is inflight's plus it.
	taken := newLoad()
	count := func(m, t map[string]int, key string) int { return m[key] + t[key] }
	var out []*ent.Delivery
	for len(out) < limit && len(queues) > 0 {
		best := -1
		for i := 0; i < len(queues); i++ {
			q := queues[i]
			if len(q.rows) == 0 || count(inflight.sessions, taken.sessions, q.who.session) >= b.session ||
				count(inflight.users, taken.users, q.who.user) >= b.user {
				queues = append(queues[:i], queues[i+1:]...)
				i--
				continue
			}
			if best < 0 || less(count(inflight.users, taken.users, q.who.user), count(inflight.sessions, taken.sessions, q.who.session),
				count(inflight.users, taken.users, queues[best].who.user), count(inflight.sessions, taken.sessions, queues[best].who.session)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		q := queues[best]
		for len(q.rows) > 0 {
			c := q.rows[0]
			q.rows = q.rows[1:]
			if count(inflight.webhooks, taken.webhooks, c.WebhookID) < b.webhook {
				out = append(out, c)
				taken.add(ownerOf(c), 1)
				break
			}
		}
	}
	return out
}

// less orders (user load, session load) pairs; equal pairs are not less,
// so the older queue keeps a tie.
func less(user, session, otherUser, otherSession int) bool {
	if user != otherUser {
		return user < otherUser
	}
	return session < otherSession
}
