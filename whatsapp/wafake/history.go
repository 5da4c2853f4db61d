package wafake

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/proto/waWeb"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// HistoryMessage is one message of a chat's history as the phone holds it.
type HistoryMessage struct {
	ID     string
	FromMe bool
	Text   string
	Time   time.Time
	// Message is the message itself when it is more than a text (media,
	// a location, …); nil: a text of Text.
	Message *waE2E.Message
}

// content is the message of m as a history sync carries it.
func (m HistoryMessage) content() *waE2E.Message {
	if m.Message != nil {
		return m.Message
	}
	return &waE2E.Message{Conversation: proto.String(m.Text)}
}

// HistoryChat is one chat of a history sync.
type HistoryChat struct {
	JID      types.JID
	Name     string // the group's subject or the contact's name; "" none
	Unread   int    // messages not read yet
	Archived bool
	Messages []HistoryMessage
}

// History is what one history sync hands over.
type History struct {
	Chats []HistoryChat
	// PushNames are the names contacts set for themselves, by phone number.
	PushNames map[string]string
}

// SendHistorySync has the phone of account phone give every linked device
// the history of chats, as after linking: the history is zlib-compressed,
// uploaded as an encrypted media blob for each device, and announced in a
// peer message the device downloads it from (events.HistorySync), then
// deletes.
func (n *Network) SendHistorySync(phone string, chats []HistoryChat) error {
	return n.SendHistory(phone, History{Chats: chats})
}

// SendHistory is SendHistorySync with push names, which follow in a sync
// of their own (PUSH_NAME), as the phone sends them.
func (n *Network) SendHistory(phone string, h History) error {
	n.mu.Lock()
	acct := n.accounts[phone]
	comps := linkedCompanionsLocked(acct)
	n.mu.Unlock()
	if len(comps) == 0 {
		return fmt.Errorf("wafake: account %s has no linked device", phone)
	}
	for _, comp := range comps {
		if err := n.sendHistoryTo(comp, initialSync(h.Chats), ""); err != nil {
			return err
		}
		if len(h.PushNames) == 0 {
			continue
		}
		if err := n.sendHistoryTo(comp, pushNameSync(h.PushNames), ""); err != nil {
			return err
		}
	}
	return nil
}

// linkedCompanionsLocked is every linked device of acct (nil: none). n.mu
// must be held.
func linkedCompanionsLocked(acct *account) []*companion {
	if acct == nil {
		return nil
	}
	var comps []*companion
	for _, j := range acct.deviceJIDs()[1:] {
		comps = append(comps, acct.devices[j.Device])
	}
	return comps
}

// initialSync is the INITIAL_BOOTSTRAP sync of chats.
func initialSync(chats []HistoryChat) *waHistorySync.HistorySync {
	hs := &waHistorySync.HistorySync{
		SyncType:   waHistorySync.HistorySync_INITIAL_BOOTSTRAP.Enum(),
		ChunkOrder: proto.Uint32(1),
		Progress:   proto.Uint32(100),
	}
	for _, c := range chats {
		conv := &waHistorySync.Conversation{ID: proto.String(c.JID.String()), UnreadCount: proto.Uint32(uint32(c.Unread)), Archived: proto.Bool(c.Archived)}
		if c.Name != "" {
			conv.Name = proto.String(c.Name)
		}
		conv.Messages = historyMessages(c.JID, c.Messages)
		hs.Conversations = append(hs.Conversations, conv)
	}
	return hs
}

// historyMessages are msgs of chat as a sync carries them.
func historyMessages(chat types.JID, msgs []HistoryMessage) []*waHistorySync.HistorySyncMsg {
	var out []*waHistorySync.HistorySyncMsg
	for _, m := range msgs {
		out = append(out, &waHistorySync.HistorySyncMsg{Message: &waWeb.WebMessageInfo{
			Key:              &waCommon.MessageKey{RemoteJID: proto.String(chat.String()), FromMe: proto.Bool(m.FromMe), ID: proto.String(m.ID)},
			Message:          m.content(),
			MessageTimestamp: proto.Uint64(uint64(m.Time.Unix())),
		}})
	}
	return out
}

// pushNameSync is the PUSH_NAME sync of names, by phone number.
func pushNameSync(names map[string]string) *waHistorySync.HistorySync {
	hs := &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_PUSH_NAME.Enum(), ChunkOrder: proto.Uint32(1)}
	for _, p := range slices.Sorted(maps.Keys(names)) {
		hs.Pushnames = append(hs.Pushnames, &waHistorySync.Pushname{
			ID: proto.String(types.NewJID(p, types.DefaultUserServer).String()), Pushname: proto.String(names[p]),
		})
	}
	return hs
}

// sendHistoryTo compresses hs and hands it to the linked device comp: one
// upload a device, as the phone does, since a device deletes its blob once
// it has processed it (DeleteMedia). request, when not "", is the id of
// the device's request the sync answers (peerDataRequestSessionID).
func (n *Network) sendHistoryTo(comp *companion, hs *waHistorySync.HistorySync, request string) error {
	node, id, err := n.historyNotification(comp, hs, request)
	if err != nil {
		return err
	}
	n.queue(comp, id, node)
	return nil
}

// historyNotification uploads hs for comp and builds the peer message that
// announces it.
func (n *Network) historyNotification(comp *companion, hs *waHistorySync.HistorySync, request string) (node waBinary.Node, id string, err error) {
	raw, err := proto.Marshal(hs)
	if err != nil {
		return node, "", err
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(raw); err != nil {
		return node, "", err
	}
	if err := w.Close(); err != nil {
		return node, "", err
	}
	up, err := n.Upload(z.Bytes(), whatsmeow.MediaHistory)
	if err != nil {
		return node, "", err
	}
	notif := &waE2E.HistorySyncNotification{
		FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, DirectPath: proto.String(up.DirectPath),
		SyncType: waE2E.HistorySyncType(hs.GetSyncType()).Enum(), ChunkOrder: proto.Uint32(hs.GetChunkOrder()),
	}
	if request != "" {
		notif.PeerDataRequestSessionID = proto.String(request)
	}
	msg := &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type:                    waE2E.ProtocolMessage_HISTORY_SYNC_NOTIFICATION.Enum(),
		HistorySyncNotification: notif,
	}}
	id, node, err = n.peerMessage(comp.acct, comp, msg)
	return node, id, err
}
