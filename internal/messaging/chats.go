package messaging

import "sync"

// maxKnownChats bounds the chats knownChats remembers; past it the memory
// starts again empty (a miss only costs the query it saves).
const maxKnownChats = 100_000

// knownChats remembers, per session and chat, one message the store holds:
// ChatSeen asks for a message of the chat other than the one being
// recorded, for every message, and the answer only ever turns from false
// to true (the store deletes no message of a live session), so a chat
// remembered with another message id is seen without a query.
type knownChats struct {
	mu    sync.Mutex
	first map[chatKey]string // → a message id stored in that chat
}

type chatKey struct{ session, chat string }

// other reports whether a message of the chat other than messageID is
// known to be stored; false means "ask the store".
func (k *knownChats) other(sessionID, chat, messageID string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, ok := k.first[chatKey{sessionID, chat}]
	return ok && id != messageID
}

// stored remembers that messageID of the chat is stored (committed).
func (k *knownChats) stored(sessionID, chat, messageID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := chatKey{sessionID, chat}
	if _, ok := k.first[key]; ok {
		return
	}
	if k.first == nil || len(k.first) >= maxKnownChats {
		k.first = map[chatKey]string{}
	}
	k.first[key] = messageID
}
