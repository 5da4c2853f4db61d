package whatsapp

// What the account learns about users: contacts.upsert for an entry of the
// address book (app state, from the phone), contacts.update for what
// WhatsApp tells about a user (push name and verified business name seen
// on a message, the about text, the profile picture).

import (
	"context"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The contact kinds (events.md).
const (
	KindContactsUpdate = "contacts.update" // {id, phone, lid, pushName?, businessName?, about?, picture?, timestamp}
)

// handleContact publishes an address book entry the phone saved or changed.
// The names WhatsApp told about the user (push name, business name) come
// from whatsmeow's contact store.
func (r *clientRun) handleContact(evt *events.Contact) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	addrs := []types.JID{evt.JID}
	for _, s := range []string{evt.Action.GetLidJID(), evt.Action.GetPnJID()} {
		if j, err := types.ParseJID(s); err == nil && s != "" {
			addrs = append(addrs, j)
		}
	}
	p := personData(personOf(ctx, r.cli, addrs...))
	d := &payload.Contact{
		ID: p.JID, Phone: p.Phone, LID: p.LID,
		FullName: payload.Text(evt.Action.GetFullName()), FirstName: payload.Text(evt.Action.GetFirstName()),
	}
	if info, err := r.cli.Store.Contacts.GetContact(ctx, evt.JID); err == nil && info.Found {
		d.PushName, d.BusinessName = payload.Text(info.PushName), payload.Text(info.BusinessName)
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindContactsUpsert, Data: d}) == nil
}

// handleUserInfo publishes what WhatsApp told about a user: PushName and
// BusinessName (whatsmeow compares them with its store when a message
// arrives, on a goroutine of their own), UserAbout, and Picture (of a user;
// a group's picture is groups.update).
func (r *clientRun) handleUserInfo(raw any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	update := func(addrs ...types.JID) *payload.ContactUpdate {
		p := personData(personOf(ctx, r.cli, addrs...))
		return &payload.ContactUpdate{ID: p.JID, Phone: p.Phone, LID: p.LID}
	}
	var d *payload.ContactUpdate
	switch evt := raw.(type) {
	case *events.PushName:
		d = update(evt.JID, evt.JIDAlt)
		d.PushName = payload.Text(evt.NewPushName)
		if evt.Message != nil {
			d.Timestamp = payload.At(evt.Message.Timestamp)
		}
	case *events.BusinessName:
		d = update(evt.JID)
		d.BusinessName = payload.Text(evt.NewBusinessName)
		if evt.Message != nil {
			d.Timestamp = payload.At(evt.Message.Timestamp)
		}
	case *events.UserAbout:
		d = update(evt.JID)
		d.About, d.Timestamp = ptr(evt.Status), payload.At(evt.Timestamp)
	case *events.Picture:
		if evt.JID.Server == types.GroupServer {
			return r.handleGroupPicture(ctx, evt)
		}
		d = update(evt.JID)
		d.Picture, d.Timestamp = pictureData(ctx, r, evt), payload.At(evt.Timestamp)
	default:
		return true
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindContactsUpdate, Data: d}) == nil
}

// pictureData is a picture change in the data's shape. The id is null when
// the picture was removed, and when WhatsApp did not say (a change of the
// account's own picture on another device).
func pictureData(ctx context.Context, r *clientRun, evt *events.Picture) *payload.Picture {
	p := &payload.Picture{ID: payload.Text(evt.PictureID), Removed: evt.Remove}
	if !evt.Author.IsEmpty() {
		p.Author = payload.Text(personOf(ctx, r.cli, evt.Author).jid().String())
	}
	return p
}
