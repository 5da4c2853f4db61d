package ingest

import "sync"

// maxChats bounds a Sink's chat memory; past it the memory starts over
// (the store still answers).
const maxChats = 1 << 16

// chatMemory spares the message store's ChatSeen query for each message:
// it holds, for chats of sessions, one message the store is known to hold
// (recorded, and its event committed). The store never deletes a message
// but with its whole session, so a message of the chat other than that
// one means the chat is known. Its zero value is ready.
type chatMemory struct {
	mu    sync.Mutex
	known map[chatKey]string // a stored message id
}

type chatKey struct{ session, chat string }

// lookup returns a message id of the chat the store holds, if remembered.
func (c *chatMemory) lookup(session, chat string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.known[chatKey{session, chat}]
	return id, ok
}

// remember notes that the store holds message id of the chat.
func (c *chatMemory) remember(session, chat, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := chatKey{session, chat}
	if _, ok := c.known[k]; ok {
		return
	}
	if c.known == nil || len(c.known) >= maxChats {
		c.known = map[chatKey]string{}
	}
	c.known[k] = id
}
