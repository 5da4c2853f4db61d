package wafake

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mau.fi/whatsmeow"
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
	hs := &waHistorySync.HistorySync{
		SyncType:   waHistorySync.HistorySync_INITIAL_BOOTSTRAP.Enum(),
		ChunkOrder: proto.Uint32(1),
		Progress:   proto.Uint32(100),
	}
	for _, c := range h.Chats {
		conv := &waHistorySync.Conversation{ID: proto.String(c.JID.String()), UnreadCount: proto.Uint32(uint32(c.Unread)), Archived: proto.Bool(c.Archived)}
		if c.Name != "" {
			conv.Name = proto.String(c.Name)
		}
		for _, m := range c.Messages {
			conv.Messages = append(conv.Messages, &waHistorySync.HistorySyncMsg{Message: &waWeb.WebMessageInfo{
				Key:              &waCommon.MessageKey{RemoteJID: proto.String(c.JID.String()), FromMe: proto.Bool(m.FromMe), ID: proto.String(m.ID)},
				Message:          &waE2E.Message{Conversation: proto.String(m.Text)},
				MessageTimestamp: proto.Uint64(uint64(m.Time.Unix())),
			}})
		}
		hs.Conversations = append(hs.Conversations, conv)
	}
	if err := n.sendHistoryBlob(phone, hs); err != nil || len(h.PushNames) == 0 {
		return err
	}
	names := &waHistorySync.HistorySync{SyncType: waHistorySync.HistorySync_PUSH_NAME.Enum(), ChunkOrder: proto.Uint32(1)}
	for _, p := range slices.Sorted(maps.Keys(h.PushNames)) {
		names.Pushnames = append(names.Pushnames, &waHistorySync.Pushname{
			ID: proto.String(types.NewJID(p, types.DefaultUserServer).String()), Pushname: proto.String(h.PushNames[p]),
		})
	}
	return n.sendHistoryBlob(phone, names)
}

// sendHistoryBlob compresses hs and hands it to every linked device of the
// account of phone.
func (n *Network) sendHistoryBlob(phone string, hs *waHistorySync.HistorySync) error {
	raw, err := proto.Marshal(hs)
	if err != nil {
		return err
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(raw); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	blob := z.Bytes()
	n.mu.Lock()
	acct := n.accounts[phone]
	var comps []*companion
	if acct != nil {
		for _, j := range acct.deviceJIDs()[1:] {
			comps = append(comps, acct.devices[j.Device])
		}
	}
	n.mu.Unlock()
	if len(comps) == 0 {
		return fmt.Errorf("wafake: account %s has no linked device", phone)
	}
	for _, comp := range comps {
		// One upload a device, as the phone does: a device deletes its blob
		// once it has processed it (DeleteMedia).
		up, err := n.Upload(blob, whatsmeow.MediaHistory)
		if err != nil {
			return err
		}
		msg := &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
			Type: waE2E.ProtocolMessage_HISTORY_SYNC_NOTIFICATION.Enum(),
			HistorySyncNotification: &waE2E.HistorySyncNotification{
				FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, DirectPath: proto.String(up.DirectPath),
				SyncType: waE2E.HistorySyncType(hs.GetSyncType()).Enum(), ChunkOrder: proto.Uint32(hs.GetChunkOrder()),
			},
		}}
		id, node, err := n.peerMessage(acct, comp, msg)
		if err != nil {
			return err
		}
		n.queue(comp, id, node)
	}
	return nil
}
