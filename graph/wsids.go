package graph

import (
	"encoding/json"
	"strconv"
	"sync"
)

// opIDs gives each operation of a socket an id of its own for gqlgen and
// the client's id back on what gqlgen sends. gqlgen forgets an operation
// only after it has sent the operation's complete, while the protocol
// frees the id for the client when the client completes it, or when that
// complete arrives: an id used again at once made gqlgen forget the new
// operation in place of the old, so its complete was ignored and it ran
// on unseen until the socket closed. gqlgen's ids are never the client's,
// so they cannot meet.
type opIDs struct {
	mu       sync.Mutex
	seq      uint64
	byClient map[string]string // running operations: the client's id → gqlgen's
	byServer map[string]string // gqlgen's id → the client's, until gqlgen ends it
}

func newOpIDs() *opIDs {
	return &opIDs{byClient: map[string]string{}, byServer: map[string]string{}}
}

// start gives a new operation of the client's id its id for gqlgen;
// running is true (and nothing is started) when one of that id runs.
func (o *opIDs) start(client string) (server string, running bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, running := o.byClient[client]; running {
		return "", true
	}
	o.seq++
	server = strconv.FormatUint(o.seq, 10)
	o.byClient[client] = server
	o.byServer[server] = client
	return server, false
}

// stop frees the client's id and returns the id gqlgen knows its
// operation by; ok is false when none of that id runs.
func (o *opIDs) stop(client string) (server string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	server, ok = o.byClient[client]
	delete(o.byClient, client)
	return server, ok
}

// client returns the client's id of gqlgen's id (server itself when it
// is not one of this socket's operations). end is true for the last
// message of an operation: the id is free again, before the client can
// learn of it.
func (o *opIDs) client(server string, end bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	client, ok := o.byServer[server]
	if !ok {
		return server
	}
	if end {
		delete(o.byServer, server)
		if o.byClient[client] == server {
			delete(o.byClient, client)
		}
	}
	return client
}

// clientID returns the client's id of gqlgen's id, for a message that
// does not end the operation.
func (o *opIDs) clientID(server string) string { return o.client(server, false) }

// renamed encodes a client's message again with id in place of its own.
func renamed(m clientMessage, id string) []byte {
	m.ID = id
	b, _ := json.Marshal(m) // strings and raw JSON already checked
	return b
}
