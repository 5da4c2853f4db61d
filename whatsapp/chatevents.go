package whatsapp

// What the phone or another device of the account does to chats and to
// messages for this account only, from app state: chats.update (archive,
// pin, mute, mark read, clear), chats.delete, messages.delete (delete for
// me, clear) and messages.update for stars. Also chats.upsert's kind.
//
// whatsmeow applies app state patches before it dispatches their events
// and acknowledges the server_sync notification regardless of the
// handler's answer: an event refused here is not fetched again (a known
// gap of app state, which WhatsApp does not re-send).

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The chat kinds (events.md).
const (
	KindChatsUpdate    = "chats.update"    // {id, archived?, pinned?, muted?, muteUntil?, read?, unreadCount?, cleared?, ephemeralSeconds?, timestamp}
	KindChatsDelete    = "chats.delete"    // {id, deleteMedia, timestamp}
	KindMessagesDelete = "messages.delete" // {id, chat, fromMe, sender, all, deleteMedia, timestamp}
)

// Star statuses of messages.update: events.md's list has none for stars, so
// these two are added to it (starring changes nothing of delivery).
const (
	statusStarred   = "starred"
	statusUnstarred = "unstarred"
)

// handleChatState publishes a change of a chat's state (Archive, Pin,
// Mute, MarkChatAsRead, ClearChat, DeleteChat).
func (r *clientRun) handleChatState(raw any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var evs []Event
	update := func(u *payload.ChatUpdate) {
		evs = append(evs, Event{Kind: KindChatsUpdate, Data: u})
	}
	switch evt := raw.(type) {
	case *events.Archive:
		update(&payload.ChatUpdate{ID: r.chatID(ctx, evt.JID), Archived: ptr(evt.Action.GetArchived()), Timestamp: payload.At(evt.Timestamp)})
	case *events.Pin:
		update(&payload.ChatUpdate{ID: r.chatID(ctx, evt.JID), Pinned: ptr(evt.Action.GetPinned()), Timestamp: payload.At(evt.Timestamp)})
	case *events.Mute:
		u := &payload.ChatUpdate{ID: r.chatID(ctx, evt.JID), Muted: ptr(evt.Action.GetMuted()), Timestamp: payload.At(evt.Timestamp)}
		// A mute without end has the end -1.
		if end := evt.Action.GetMuteEndTimestamp(); evt.Action.GetMuted() && end > 0 {
			u.MuteUntil = payload.At(time.UnixMilli(end))
		}
		update(u)
	case *events.MarkChatAsRead:
		read := evt.Action.GetRead()
		u := &payload.ChatUpdate{ID: r.chatID(ctx, evt.JID), Read: &read, Timestamp: payload.At(evt.Timestamp)}
		if read {
			u.UnreadCount = ptr(0)
		}
		update(u)
	case *events.ClearChat:
		id, ts := r.chatID(ctx, evt.JID), payload.At(evt.Timestamp)
		update(&payload.ChatUpdate{ID: id, Cleared: ptr(true), Timestamp: ts})
		evs = append(evs, Event{Kind: KindMessagesDelete, Data: &payload.MessageDelete{
			Chat: id, All: true, DeleteMedia: evt.DeleteMedia, Timestamp: ts,
		}})
	case *events.DeleteChat:
		evs = append(evs, Event{Kind: KindChatsDelete, Data: &payload.ChatDelete{
			ID: r.chatID(ctx, evt.JID), DeleteMedia: evt.DeleteMedia, Timestamp: payload.At(evt.Timestamp),
		}})
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}

// handleMessageState publishes what the account did to one message for
// itself: deleted it (messages.delete) or starred it (messages.update).
func (r *clientRun) handleMessageState(raw any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var ev Event
	switch evt := raw.(type) {
	case *events.DeleteForMe:
		d := &payload.MessageDelete{
			ID: payload.Text(evt.MessageID), Chat: r.chatID(ctx, evt.ChatJID), FromMe: ptr(evt.IsFromMe),
			DeleteMedia: evt.Action.GetDeleteMedia(), Timestamp: payload.At(evt.Timestamp),
		}
		if !evt.SenderJID.IsEmpty() {
			d.Sender = payload.Text(personOf(ctx, r.cli, evt.SenderJID).jid().String())
		}
		ev = Event{Kind: KindMessagesDelete, Data: d}
	case *events.Star:
		d := &payload.MessageStatus{
			ID: evt.MessageID, Chat: r.chatID(ctx, evt.ChatJID), Status: statusUnstarred, Timestamp: payload.At(evt.Timestamp),
		}
		if evt.Action.GetStarred() {
			d.Status = statusStarred
		}
		if !evt.SenderJID.IsEmpty() && !evt.IsFromMe {
			d.Sender = payload.Text(personOf(ctx, r.cli, evt.SenderJID).jid().String())
		}
		ev = Event{Kind: KindMessagesUpdate, Data: d}
	default:
		return true
	}
	return r.m.publishEvents(r.s, r.cli, ev) == nil
}

func ptr[T any](v T) *T { return &v }
