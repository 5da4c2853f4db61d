package messaging

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/whatsapp"
)

// What a session's settings do by themselves (surface.md §4): autoMarkRead
// marks each inbound message read once it is stored, autoRejectCalls
// rejects each incoming call and sends callRejectMessage to the caller.
// The sink hands over the events each commit stored anew (Follow, never
// blocking the session's event path); the service acts on them in Run,
// through the same operations a client calls, so a mark read or a
// rejection is published as the client's would be.

// automationBacklog bounds the events waiting to be acted on; past it an
// event is let go with a warning rather than holding up the session.
const automationBacklog = 1024

// automationTimeout bounds one action.
const automationTimeout = 30 * time.Second

// Automations is the queue between the sink and the service: built first
// (the sink is built before the sessions, and the service after them),
// handed to both.
type Automations struct {
	queue   chan followed
	log     *slog.Logger
	dropped atomic.Int64 // let go since the last report: one warning per run of them
}

type followed struct {
	sessionID string
	ev        whatsapp.Event
}

// NewAutomations returns an empty queue; log (nil: discarded) says when
// one is let go.
func NewAutomations(log *slog.Logger) *Automations {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Automations{queue: make(chan followed, automationBacklog), log: log}
}

// Follow queues the events a settings may act on (ingest.Follower): an
// inbound message, a call offered.
func (a *Automations) Follow(sessionID string, evs []whatsapp.Event) {
	for _, ev := range evs {
		if !automatable(ev) {
			continue
		}
		select {
		case a.queue <- followed{sessionID, ev}:
		default:
			if a.dropped.Add(1) == 1 {
				a.log.Warn("automations are let go: too many waiting", "session_id", sessionID, "kind", ev.Kind)
			}
		}
	}
}

// automatable tells the events automations act on.
func automatable(ev whatsapp.Event) bool {
	switch ev.Kind {
	case whatsapp.KindInboundMessage:
		m := ev.Message
		return m != nil && !m.FromMe && m.Chat != "" && readable[m.Type]
	case whatsapp.KindCall:
		c, ok := ev.Data.(*payload.Call)
		return ok && c.Status == "offer"
	case whatsapp.KindConnectionUpdate: // the send rate's queue goes on (resumePaced)
		c, ok := ev.Data.(*payload.Connection)
		return ok && c.Status == string(whatsapp.StatusConnected)
	}
	return false
}

// readable are the kinds of message a phone sends read receipts for: not a
// reaction, an edit or a revoke, which change a message shown already.
var readable = map[string]bool{
	"text": true, "image": true, "video": true, "audio": true, "voice": true, "document": true,
	"sticker": true, "location": true, "contact": true, "poll": true, "unknown": true,
}

// automationsAtOnce bounds the actions running at once: a reject
// message typed first takes seconds, and must not hold up the others.
const automationsAtOnce = 8

// automate acts on the queued events until ctx is done, and returns once
// the actions under way ended.
func (s *Service) automate(ctx context.Context) {
	if s.automations == nil {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, automationsAtOnce)
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-s.automations.queue:
			if n := s.automations.dropped.Swap(0); n > 0 {
				s.log.Warn("automations were let go: too many waiting", "count", n)
			}
			select {
			case <-ctx.Done():
				return
			case slots <- struct{}{}:
			}
			wg.Go(func() {
				defer func() { <-slots }()
				actx, cancel := context.WithTimeout(ctx, automationTimeout)
				defer cancel()
				s.act(actx, f.sessionID, f.ev)
			})
		}
	}
}

// act does what the session's settings say of ev; a failure is logged.
func (s *Service) act(ctx context.Context, sessionID string, ev whatsapp.Event) {
	if ev.Kind == whatsapp.KindConnectionUpdate {
		if err := s.resumePaced(ctx, sessionID); err != nil {
			s.log.WarnContext(ctx, "the send queue could not go on", "session_id", sessionID, "err", err)
		}
		return
	}
	set, err := s.settingsOf(ctx, sessionID)
	if err != nil {
		s.log.WarnContext(ctx, "automation", "session_id", sessionID, "err", err)
		return
	}
	switch ev.Kind {
	case whatsapp.KindInboundMessage:
		if !set.AutoMarkRead {
			return
		}
		if err := s.MarkRead(ctx, sessionID, ev.Message.Chat, []string{ev.Message.ID}); err != nil {
			s.log.WarnContext(ctx, "auto mark read failed", "session_id", sessionID, "message_id", ev.Message.ID, "err", err)
		}
	case whatsapp.KindCall:
		if !set.AutoRejectCalls {
			return
		}
		c := ev.Data.(*payload.Call)
		if err := s.RejectCall(ctx, sessionID, c.CallID, c.From); err != nil {
			// Rejected already (by a client, or the event came twice):
			// the caller was told once.
			s.log.WarnContext(ctx, "auto reject call failed", "session_id", sessionID, "call_id", c.CallID, "err", err)
			return
		}
		s.log.InfoContext(ctx, "call rejected by the session's settings", "session_id", sessionID, "call_id", c.CallID)
		if set.CallRejectMessage == "" {
			return
		}
		if _, err := s.Send(ctx, sessionID, Request{Type: TypeText, Number: c.From, Text: set.CallRejectMessage}); err != nil {
			s.log.WarnContext(ctx, "the call reject message was not sent", "session_id", sessionID, "call_id", c.CallID, "err", err)
		}
	}
}
