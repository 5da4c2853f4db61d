package whatsapp

// Events derived at login rather than from a stanza: the whole block list
// (blocklist.set) at every login, and the groups the account is in
// (groups.upsert, one per group) at the first login after pairing, when
// the session knows nothing of them yet.

import (
	"context"
	"time"
)

// derivedTimeout bounds each read of the login events: the session reads
// CONNECTED only after them.
const derivedTimeout = 10 * time.Second

// publishOnConnect reads and publishes the login events. They are published
// before connection.update CONNECTED, so that a consumer that sees the
// session connected has seen them. A read that fails is logged and left
// out: the session connects regardless.
func (r *clientRun) publishOnConnect() {
	ctx, cancel := context.WithTimeout(context.Background(), derivedTimeout)
	defer cancel()
	var evs []Event
	if ev, err := r.blocklistSet(ctx); err != nil {
		r.s.log.Warn("the block list could not be read at login", "err", err)
	} else {
		evs = append(evs, ev)
	}
	// paired stays set until the groups are published: a login that could
	// not list them leaves it to the next (whatsmeow reconnects with the
	// same client).
	listed := false
	if r.paired.Load() {
		groups, err := r.cli.GetJoinedGroups(ctx)
		if err != nil {
			r.s.log.Warn("the joined groups could not be listed after pairing", "err", err)
		}
		for _, g := range groups {
			evs = append(evs, Event{Kind: KindGroupsUpsert, Data: groupData(ctx, r.cli, g, "listed", nil)})
		}
		listed = err == nil
	}
	if err := r.m.publishEvents(r.s, r.cli, evs...); err != nil {
		r.s.log.Warn("the login events were not stored", "err", err)
		return
	}
	if listed {
		r.paired.Store(false)
	}
}
