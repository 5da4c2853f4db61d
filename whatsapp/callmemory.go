package whatsapp

import (
	"slices"
	"sync"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// A call can be rejected only while it rings, and only the call its
// caller made: the session remembers the calls it was offered (handleCall)
// and how each ended, and RejectCall claims a ringing call before it
// tells WhatsApp, so an unknown call, a wrong caller or a second
// rejection is refused before anything is sent or published. A call rings
// for under a minute, so the memory is the process's: a call offered
// before a restart is unknown after it (it has ended by then).
const maxCalls = 64 // per session; past it the oldest calls are forgotten

// callMemory holds the calls a session was offered since the process
// started, by call id. Its zero value is ready.
type callMemory struct {
	mu    sync.Mutex
	order []string // call ids, oldest offer first
	calls map[string]*knownCall
}

type knownCall struct {
	callers []types.JID // the caller's addresses: number and LID, as known
	// ended is "" while the call rings; else what ended it: "reject" (by
	// this API, or the account's phone), "rejecting" (a rejection being
	// sent now), "accept" (answered on the phone) or "terminate" (the
	// caller hung up, or it timed out).
	ended string
}

// offered remembers call id, offered by callers (its addresses).
func (c *callMemory) offered(id string, callers ...types.JID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]*knownCall{}
	}
	k := c.calls[id]
	if k == nil {
		k = &knownCall{}
		c.calls[id] = k
		c.order = append(c.order, id)
	}
	for _, j := range callers {
		if !j.IsEmpty() && !slices.Contains(k.callers, j.ToNonAD()) {
			k.callers = append(k.callers, j.ToNonAD())
		}
	}
	for len(c.order) > maxCalls {
		delete(c.calls, c.order[0])
		c.order = c.order[1:]
	}
}

// end records that call id ended with stanza status (accept, reject,
// terminate); a call never offered stays unknown.
func (c *callMemory) end(id, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.calls[id]; k != nil && k.ended == "" {
		k.ended = status
	}
}

// claim takes ringing call id for a rejection from the caller from: the
// call is then "rejecting" until settle. It refuses a call never offered
// (NOT_FOUND), a from that is not its caller (BAD_USER_INPUT naming from)
// and a call that no longer rings (CONFLICT).
func (c *callMemory) claim(sessionID, id string, from types.JID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.calls[id]
	if k == nil {
		return &fault.Error{Code: fault.NotFound, Field: "callId",
			Message: "callId " + id + ": session " + sessionID + " was offered no call with this id (the id of a call event with status offer)"}
	}
	if !slices.Contains(k.callers, from.ToNonAD()) {
		return fault.InvalidField("from", "from must be the caller of call %s (%s), not %s", id, callerNames(k.callers), from.ToNonAD())
	}
	switch k.ended {
	case "":
		k.ended = "rejecting"
		return nil
	case "reject", "rejecting":
		return &fault.Error{Code: fault.Conflict, Field: "callId", Message: "call " + id + " was already rejected"}
	case "accept":
		return &fault.Error{Code: fault.Conflict, Field: "callId", Message: "call " + id + " was answered on the phone: only a ringing call can be rejected"}
	default:
		return &fault.Error{Code: fault.Conflict, Field: "callId", Message: "call " + id + " has ended (the caller hung up or it timed out): only a ringing call can be rejected"}
	}
}

// settle ends a claim: the call is rejected, or, when the rejection could
// not be sent, rings again.
func (c *callMemory) settle(id string, rejected bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.calls[id]; k != nil && k.ended == "rejecting" {
		k.ended = ""
		if rejected {
			k.ended = "reject"
		}
	}
}

// callerNames words a caller's addresses: its number, or its LID.
func callerNames(callers []types.JID) string {
	for _, j := range callers {
		if j.Server == types.DefaultUserServer {
			return j.User
		}
	}
	if len(callers) > 0 {
		return callers[0].String()
	}
	return "unknown"
}
