package whatsapp

// The account's block list: blocklist.set (derived: the whole list, read
// at login and whenever WhatsApp says it changed wholesale) and
// blocklist.update (one event per user blocked or unblocked).

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The block list kinds (events.md).
const (
	KindBlocklistSet    = "blocklist.set"    // {blocked: [{jid, phone, lid}]}
	KindBlocklistUpdate = "blocklist.update" // {jid, phone, lid, action: block|unblock}
)

// personData is p in the data's shape.
func personData(p person) payload.Person {
	d := payload.Person{JID: p.jid().String()}
	d.Phone = p.phoneText()
	d.LID = p.lidText()
	return d
}

// blocklistSet reads the whole block list from WhatsApp.
func (r *clientRun) blocklistSet(ctx context.Context) (Event, error) {
	list, err := r.cli.GetBlocklist(ctx)
	if err != nil {
		return Event{}, fmt.Errorf("read the block list: %w", err)
	}
	d := &payload.Blocklist{Blocked: make([]payload.Person, 0, len(list.JIDs))}
	for _, j := range list.JIDs {
		d.Blocked = append(d.Blocked, personData(personOf(ctx, r.cli, j)))
	}
	return Event{Kind: KindBlocklistSet, Data: d}, nil
}

// handleBlocklist publishes a change of the block list made on the phone or
// another device. WhatsApp names each user blocked or unblocked, or only
// says the list was modified (many changes at once): then it is read again
// and published whole. whatsmeow handles these notifications on a goroutine
// of their own and acknowledges them regardless of the handler's answer.
func (r *clientRun) handleBlocklist(evt *events.Blocklist) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if evt.Action == events.BlocklistActionModify {
		ev, err := r.blocklistSet(ctx)
		if err != nil {
			r.s.log.Warn("the block list changed but could not be read", "err", err)
			return false
		}
		return r.m.publishEvents(r.s, r.cli, ev) == nil
	}
	evs := make([]Event, 0, len(evt.Changes))
	for _, c := range evt.Changes {
		p := personData(personOf(ctx, r.cli, c.JID))
		evs = append(evs, Event{Kind: KindBlocklistUpdate, Data: &payload.BlocklistChange{
			JID: p.JID, Phone: p.Phone, LID: p.LID, Action: string(c.Action),
		}})
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}

// chatID is the name of a chat in events: the group, or the other user by
// phone JID when known, as message events name chats.
func (r *clientRun) chatID(ctx context.Context, jid types.JID) string {
	if jid.Server != types.DefaultUserServer && jid.Server != types.HiddenUserServer {
		return jid.String()
	}
	if c := personOf(ctx, r.cli, jid).jid(); !c.IsEmpty() {
		return c.String()
	}
	return jid.String()
}
