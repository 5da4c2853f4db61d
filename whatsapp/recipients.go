package whatsapp

import (
	"sync"
	"time"

	"go.mau.fi/whatsmeow/types"
)

// A send to a number first asks WhatsApp whether the number is on it
// (recipient, send.go): one usync query, a round trip to WhatsApp, before
// every message. A session sending to the same numbers again and again
// remembers the answer for a while instead, as whatsmeow itself remembers
// a user's devices. Only numbers found on WhatsApp are remembered: a
// number that is not is asked again at once, so a number that joins is
// reachable at its next send, and one that left within recipientTTL fails
// in SendMessage instead of the check.
const (
	recipientTTL  = 15 * time.Minute
	maxRecipients = 4096 // per session; past it the oldest answers are dropped
)

// recipientMemory holds the canonical JIDs of the numbers a session found
// on WhatsApp lately, by number. Its zero value is ready.
type recipientMemory struct {
	mu    sync.Mutex
	order []string // numbers, oldest answer first
	known map[string]knownRecipient
}

type knownRecipient struct {
	jid types.JID
	at  time.Time
}

// lookup returns the canonical JID remembered for number, if answered
// within recipientTTL of now.
func (r *recipientMemory) lookup(number string, now time.Time) (types.JID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.known[number]
	if !ok || now.Sub(k.at) >= recipientTTL || now.Before(k.at) {
		return types.EmptyJID, false
	}
	return k.jid, true
}

// remember keeps WhatsApp's answer for number, given at now.
func (r *recipientMemory) remember(number string, jid types.JID, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known == nil {
		r.known = map[string]knownRecipient{}
	}
	if _, ok := r.known[number]; ok {
		// Moved to the end: the order is that of the answers.
		for i, n := range r.order {
			if n == number {
				r.order = append(r.order[:i], r.order[i+1:]...)
				break
			}
		}
	}
	r.known[number] = knownRecipient{jid: jid, at: now}
	r.order = append(r.order, number)
	for len(r.order) > maxRecipients {
		delete(r.known, r.order[0])
		r.order = r.order[1:]
	}
}
