package wafake

import (
	"fmt"
	"slices"
	"time"

	"go.mau.fi/whatsmeow/appstate"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waHistorySync"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// What a phone holds of its chats and gives a linked device (surface.md
// §5): every message of each direct chat it sent or received, by chat;
// at link time a history sync of each chat with its most recent message
// only; older messages when the device asks (whatsmeow's
// BuildHistorySyncRequest, a peer message), always answered, with an
// empty sync when it holds nothing older.

// defaultHistoryCount is how many messages the phone gives a request that
// names no count.
const defaultHistoryCount = 50

// AddHistory gives the phone of account phone messages of chat it held
// before anything the network saw: a phone's history from before its
// devices linked. They join what it holds in time order.
func (n *Network) AddHistory(phone string, chat types.JID, msgs ...HistoryMessage) error {
	if chat.Server != types.DefaultUserServer && chat.Server != types.GroupServer {
		return fmt.Errorf("wafake: history of %s: a chat is a user's phone JID or a group", chat)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	a, err := n.accountLocked(phone)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.ID == "" || m.Time.IsZero() {
			return fmt.Errorf("wafake: a history message needs an id and a time")
		}
		keepHistoryLocked(a, chat, m)
	}
	return nil
}

// PhoneHistory is what the phone of account phone holds of chat, oldest
// first.
func (n *Network) PhoneHistory(phone string, chat types.JID) []HistoryMessage {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return slices.Clone(a.history[chat.ToNonAD().String()])
	}
	return nil
}

// keepHistoryLocked adds m to what the phone of a holds of chat, in time
// order (after those of the same second); a message of an id it holds is
// kept once. n.mu must be held.
func keepHistoryLocked(a *account, chat types.JID, m HistoryMessage) {
	key := chat.ToNonAD().String()
	msgs := a.history[key]
	if slices.ContainsFunc(msgs, func(h HistoryMessage) bool { return h.ID == m.ID }) {
		return
	}
	if a.history == nil {
		a.history = map[string][]HistoryMessage{}
	}
	at := len(msgs)
	for at > 0 && msgs[at-1].Time.After(m.Time) {
		at--
	}
	a.history[key] = slices.Insert(msgs, at, m)
}

// historyWorthy reports whether msg is a message of a chat's history, not
// a protocol message, a reaction or a vote about one.
func historyWorthy(msg *waE2E.Message) bool {
	return msg.Conversation != nil || msg.ExtendedTextMessage != nil || msg.ImageMessage != nil ||
		msg.VideoMessage != nil || msg.AudioMessage != nil || msg.DocumentMessage != nil ||
		msg.StickerMessage != nil || msg.LocationMessage != nil || msg.ContactMessage != nil ||
		msg.ContactsArrayMessage != nil || msg.PollCreationMessage != nil || msg.PollCreationMessageV3 != nil
}

// historyEntry is msg as the phone keeps it.
func historyEntry(id string, fromMe bool, msg *waE2E.Message, at time.Time) HistoryMessage {
	h := HistoryMessage{ID: id, FromMe: fromMe, Time: at.Truncate(time.Second)}
	if msg.Conversation != nil && msg.ExtendedTextMessage == nil {
		h.Text = msg.GetConversation()
		return h
	}
	h.Message = proto.Clone(msg).(*waE2E.Message)
	h.Message.MessageContextInfo = nil // its secret stays with the sender
	return h
}

// recordDirectLocked keeps a direct message between the accounts from and
// to in both phones' histories. n.mu must be held.
func recordDirectLocked(from, to *account, id string, msg *waE2E.Message, at time.Time) {
	if !historyWorthy(msg) {
		return
	}
	keepHistoryLocked(from, to.jid(), historyEntry(id, true, msg, at))
	keepHistoryLocked(to, from.jid(), historyEntry(id, false, msg, at))
}

// linkHistoryLocked is the history sync a newly linked device of a gets:
// each chat with its most recent message only, most recent chat first;
// nil when the phone holds no chat. n.mu must be held.
func linkHistoryLocked(a *account) *waHistorySync.HistorySync {
	if len(a.history) == 0 {
		return nil
	}
	var chats []HistoryChat
	for key, msgs := range a.history {
		jid, err := types.ParseJID(key)
		if err != nil || len(msgs) == 0 {
			continue
		}
		chats = append(chats, HistoryChat{JID: jid, Messages: msgs[len(msgs)-1:]})
	}
	slices.SortFunc(chats, func(x, y HistoryChat) int {
		if c := y.Messages[0].Time.Compare(x.Messages[0].Time); c != 0 {
			return c
		}
		return compareStrings(x.JID.String(), y.JID.String())
	})
	return initialSync(chats)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// linkPushNameLocked writes, when the account's app state has no push
// name yet, the name the phone goes by to critical_block, where a newly
// linked device reads it (whatsmeow needs it to show its presence): the
// name its devices or presence last set, else the name its messages
// carry. n.mu must be held.
func (n *Network) linkPushNameLocked(a *account) error {
	if len(a.appState.collections[string(appstate.WAPatchCriticalBlock)]) > 0 {
		return nil
	}
	name := a.pushName
	if name == "" {
		name = a.state.pushName
	}
	if name == "" {
		name, _ = n.senderIdentityLocked(a)
	}
	// a.pushName stays as it is: the network's record of a name a device
	// or the phone's owner set, which this default is not.
	_, err := n.phonePatchLocked(a, appstate.BuildSettingPushName(name))
	return err
}

// handlePeerMessage takes a message a linked device sent to its own phone
// (category peer): the phone decrypts it and answers a history request.
func (n *Network) handlePeerMessage(c *conn, node *waBinary.Node, ack waBinary.Node) {
	comp := c.dev
	id := node.AttrGetter().String("id")
	var requests []*waE2E.PeerDataOperationRequestMessage_HistorySyncOnDemandRequest
	for _, enc := range node.GetChildrenByTag("enc") {
		msg, err := n.phoneDecrypt(comp.acct, comp.jid(), enc)
		if err != nil {
			n.log.Warn("wafake: phone could not decrypt a peer message", "from", comp.jid().String(), "err", err)
			continue
		}
		req := msg.GetProtocolMessage().GetPeerDataOperationRequestMessage()
		if req.GetPeerDataOperationRequestType() == waE2E.PeerDataOperationRequestType_HISTORY_SYNC_ON_DEMAND && req.GetHistorySyncOnDemandRequest() != nil {
			requests = append(requests, req.GetHistorySyncOnDemandRequest())
		}
	}
	_ = c.send(ack)
	for _, r := range requests {
		if err := n.answerHistoryRequest(comp, id, r); err != nil {
			n.log.Warn("wafake: phone could not answer a history request", "from", comp.jid().String(), "err", err)
		}
	}
}

// answerHistoryRequest sends comp the messages of the chat r names that
// come before the oldest one the device has (by id, else by its time), at
// most r's count: an on-demand history sync, with the chat and no message
// when the phone holds nothing older.
func (n *Network) answerHistoryRequest(comp *companion, requestID string, r *waE2E.PeerDataOperationRequestMessage_HistorySyncOnDemandRequest) error {
	chat, err := types.ParseJID(r.GetChatJID())
	if err != nil {
		return fmt.Errorf("history request for chat %q: %w", r.GetChatJID(), err)
	}
	if chat.Server == types.HiddenUserServer {
		chat = n.pnOfLID(chat)
	}
	chat = chat.ToNonAD()
	count := int(r.GetOnDemandMsgCount())
	if count <= 0 {
		count = defaultHistoryCount
	}
	n.mu.Lock()
	msgs := comp.acct.history[chat.String()]
	end := slices.IndexFunc(msgs, func(m HistoryMessage) bool { return m.ID == r.GetOldestMsgID() })
	if end < 0 {
		// Not a message the phone holds: those before its time.
		end = slices.IndexFunc(msgs, func(m HistoryMessage) bool { return m.Time.Unix() >= r.GetOldestMsgTimestampMS() })
		if end < 0 {
			end = len(msgs)
		}
	}
	older := slices.Clone(msgs[max(0, end-count):end])
	n.mu.Unlock()
	hs := &waHistorySync.HistorySync{
		SyncType:   waHistorySync.HistorySync_ON_DEMAND.Enum(),
		ChunkOrder: proto.Uint32(1),
		Progress:   proto.Uint32(100),
		Conversations: []*waHistorySync.Conversation{{
			ID: proto.String(chat.String()), Messages: historyMessages(chat, older),
		}},
	}
	return n.sendHistoryTo(comp, hs, requestID)
}
