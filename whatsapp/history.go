package whatsapp

// History sync: the phone hands a linked device the account's chats and
// their recent messages as compressed blobs on the media hosts, each
// announced by a peer message. The manager's clients download them
// themselves (ManualHistorySyncDownload) inside the handler of that
// message, so the blob is downloaded, and the phone told (hist_sync
// receipt) and the blob deleted, only once its events are stored.
//
// whatsmeow acknowledges every peer message (a peer_msg receipt) before
// its handlers run, so unlike a chat message a history notification is not
// announced again when its events could not be stored: the handler retries
// the store for a few seconds, then gives up with an error in the log (the
// phone can be asked for the history again).

import (
	"context"
	"errors"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The history kinds (events.md).
const (
	KindHistorySet     = "messaging-history.set" // {syncType, chunkOrder, progress, part, parts, conversations, contacts, messageCount, chat, messages}
	KindChatsUpsert    = "chats.upsert"          // {id, name, unreadCount, archived, pinned, muteUntil, …}
	KindContactsUpsert = "contacts.upsert"       // {id, phone, lid, pushName, fullName, firstName, businessName}
)

const (
	// historyPartSize is the most messages one messaging-history.set
	// carries: an event is one row of the event log and one webhook body,
	// and must stay small whatever the phone sends in one blob.
	historyPartSize = 100
	// historyTimeout bounds the download of one blob.
	historyTimeout = 2 * time.Minute
	// historyAttempts is how often an event of a history sync is offered
	// to the publisher, the waits between doubling from historyBackoff.
	historyAttempts = 5
	historyBackoff  = 250 * time.Millisecond
)

// handleHistoryNotification downloads the blob a history sync notification
// announces and publishes what it carries. It returns false when the
// download failed for a reason that may pass or an event could not be
// stored (see the file's comment for what whatsmeow makes of that); a blob
// the media host no longer has is dropped with a warning.
func (r *clientRun) handleHistoryNotification(evt *events.Message) bool {
	info := &evt.Info
	notif := evt.Message.GetProtocolMessage().GetHistorySyncNotification()
	if !info.IsFromMe {
		return true // only the account's own phone hands out its history
	}
	ctx, cancel := context.WithTimeout(context.Background(), historyTimeout)
	defer cancel()
	// synchronousStorage: the LID map, push names and poll secrets the
	// blob carries are stored before its events are built from them.
	hs, err := r.cli.DownloadHistorySync(ctx, notif, true)
	switch {
	case errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404), errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith410):
		r.s.log.Warn("a history sync blob is no longer on the media host; it is skipped", "message_id", info.ID, "err", err)
		return true
	case err != nil:
		r.s.log.Error("downloading a history sync failed", "message_id", info.ID, "err", err)
		return false
	}
	evs := r.historyEvents(ctx, hs)
	for i := range evs {
		if !r.publishRetrying(evs[i]) {
			r.s.log.Error("a history sync could not be stored; its remaining events are lost",
				"message_id", info.ID, "type", hs.GetSyncType().String(), "published", i, "events", len(evs))
			return false
		}
	}
	r.s.log.Info("history sync", "type", hs.GetSyncType().String(), "chunk", hs.GetChunkOrder(),
		"conversations", len(hs.GetConversations()), "events", len(evs))
	if err := r.cli.SendProtocolMessageReceipt(ctx, info.ID, types.ReceiptTypeHistorySync); err != nil {
		r.s.log.Warn("acknowledging a history sync to the phone failed", "message_id", info.ID, "err", err)
	}
	if err := r.cli.DeleteMedia(ctx, whatsmeow.MediaHistory, notif.GetDirectPath(), notif.GetFileEncSHA256(), notif.GetEncHandle()); err != nil {
		r.s.log.Warn("deleting a history sync blob failed", "message_id", info.ID, "err", err)
	}
	return true
}

// publishRetrying publishes ev, offering it historyAttempts times while the
// client is still the session's. One event at a time, so a retry never
// publishes an event twice.
func (r *clientRun) publishRetrying(ev Event) bool {
	wait := historyBackoff
	for attempt := 1; ; attempt++ {
		err := r.m.publishEvents(r.s, r.cli, ev)
		if err == nil {
			return true
		}
		if errors.Is(err, errStale) || attempt == historyAttempts {
			return false
		}
		select {
		case <-time.After(wait):
		case <-r.m.ctx.Done():
			return false
		}
		wait *= 2
	}
}

// historyEvents turns a history sync into chats.upsert for each
// conversation, contacts.upsert for each push name, then the
// messaging-history.set parts with the messages.
func (r *clientRun) historyEvents(ctx context.Context, hs *waHistorySync.HistorySync) []Event {
	var chats, contacts []Event
	var msgs []payload.Message
	var recs []Message
	// An answer to requestHistory names the chat asked about; its
	// conversation carries messages only, not the chat's state.
	onDemand := hs.GetSyncType() == waHistorySync.HistorySync_ON_DEMAND
	var asked payload.Text
	convs := 0
	for _, conv := range hs.GetConversations() {
		jid, err := types.ParseJID(conv.GetID())
		if err != nil || jid.IsEmpty() {
			continue
		}
		convs++
		chat := r.historyChat(ctx, jid, conv)
		if onDemand {
			asked = payload.Text(chat.ID)
		} else {
			chats = append(chats, Event{Kind: KindChatsUpsert, Data: chat})
		}
		for _, hm := range conv.GetMessages() {
			m, err := r.cli.ParseWebMessage(jid, hm.GetMessage())
			if err != nil {
				continue
			}
			if p := pollOf(m.Message); p != nil {
				if options, beyond := boundedPoll(p); beyond == "" {
					r.s.polls.remember(m.Info.ID, options)
				}
			}
			c := contentOfEvent(m)
			if c.typ == "" {
				continue
			}
			rec, d := describe(&m.Info, chatOf(ctx, r.cli, &m.Info.MessageSource), senderOf(ctx, r.cli, &m.Info.MessageSource), c)
			msgs = append(msgs, *d)
			recs = append(recs, *rec)
		}
	}
	for _, pn := range hs.GetPushnames() {
		jid, err := types.ParseJID(pn.GetID())
		if err != nil || pn.GetPushname() == "" || (jid.Server != types.DefaultUserServer && jid.Server != types.HiddenUserServer) {
			continue
		}
		p := personOf(ctx, r.cli, jid)
		c := &payload.Contact{ID: p.jid().String(), PushName: payload.Text(pn.GetPushname())}
		c.Phone = p.phoneText()
		c.LID = p.lidText()
		contacts = append(contacts, Event{Kind: KindContactsUpsert, Data: c})
	}
	parts := max(1, (len(msgs)+historyPartSize-1)/historyPartSize)
	evs := append(chats, contacts...)
	for i := range parts {
		from, to := i*historyPartSize, min((i+1)*historyPartSize, len(msgs))
		set := &payload.HistorySet{
			SyncType: hs.GetSyncType().String(), ChunkOrder: int(hs.GetChunkOrder()), Part: i + 1, Parts: parts,
			Conversations: convs, Contacts: len(contacts), MessageCount: len(msgs),
			Messages: msgs[from:to], Chat: asked,
		}
		if hs.Progress != nil {
			progress := int(hs.GetProgress())
			set.Progress = &progress
		}
		if set.Messages == nil {
			set.Messages = []payload.Message{}
		}
		evs = append(evs, Event{Kind: KindHistorySet, Data: set, History: recs[from:to]})
	}
	return evs
}

// historyChat is the chats.upsert data of a conversation: a user's chat by
// phone JID when known, as messages name it.
func (r *clientRun) historyChat(ctx context.Context, jid types.JID, conv *waHistorySync.Conversation) *payload.Chat {
	c := &payload.Chat{ID: jid.String()}
	if jid.Server == types.DefaultUserServer || jid.Server == types.HiddenUserServer {
		addrs := []types.JID{jid}
		for _, alt := range []string{conv.GetPnJID(), conv.GetLidJID()} {
			if j, err := types.ParseJID(alt); err == nil && alt != "" {
				addrs = append(addrs, j)
			}
		}
		p := personOf(ctx, r.cli, addrs...)
		if !p.jid().IsEmpty() {
			c.ID = p.jid().String()
		}
		c.LID = p.lidText()
	}
	name := conv.GetName()
	if name == "" {
		name = conv.GetDisplayName()
	}
	c.Name = payload.Text(name)
	unread, archived, pinned, readOnly := int(conv.GetUnreadCount()), conv.GetArchived(), conv.GetPinned() != 0, conv.GetReadOnly()
	ephemeral := int(conv.GetEphemeralExpiration())
	c.UnreadCount, c.Archived, c.Pinned, c.ReadOnly, c.EphemeralSeconds = &unread, &archived, &pinned, &readOnly, &ephemeral
	if mute := conv.GetMuteEndTime(); mute != 0 {
		c.MuteUntil = payload.At(time.Unix(int64(mute), 0))
	}
	if ts := max(conv.GetConversationTimestamp(), conv.GetLastMsgTimestamp()); ts != 0 {
		c.LastMessageAt = payload.At(time.Unix(int64(ts), 0))
	}
	return c
}
