package events

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NotifyChannel is the PostgreSQL channel the Log notifies after each
// commit, one notification per session of the batch: "<session id>:<seq>",
// the highest seq the transaction committed for the session. Only ids
// travel; the rows carry the data, read by each process that follows.
const NotifyChannel = "wagraph_events"

// followRetry is the wait before the follower reads again after a failed
// read of the log.
const followRetry = time.Second

// notifyPayload is the payload of a session's notification.
func notifyPayload(sessionID string, seq int64) string {
	return sessionID + ":" + strconv.FormatInt(seq, 10)
}

// parseNotifyPayload reads a notifyPayload; ok is false for anything else.
// The seq is after the last colon: a session id could hold one.
func parseNotifyPayload(payload string) (sessionID string, seq int64, ok bool) {
	i := strings.LastIndexByte(payload, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil || seq <= 0 {
		return "", 0, false
	}
	return payload[:i], seq, true
}

// follower is the fan-out of a following bus (BusOptions.Follow): for each
// session with subscribers it knows the last seq fanned out, and hands on
// what the log holds after it, in seq order. Events come to it two ways:
// this process's commits (committedFollowed, in the Log's writer
// goroutine), handed on at once when they follow the last one fanned out;
// and notifications (Bus.Follow), for which its goroutine reads the log.
// Either way a fan-out happens under bus.mu and only continues the session's
// seq from where it stands, so the two ways cannot reorder or repeat events.
type follower struct {
	bus *Bus
	log *slog.Logger

	// Under bus.mu.
	fanned  map[string]*followed // sessions with subscribers
	pending map[string]int64     // sessions to read, up to at least this seq

	wake     chan struct{} // capacity 1: "pending has grown"
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// followed is the fan-out state of one session: the last seq fanned out.
// A session forgotten and followed again gets a new one, so a read made
// for the old one is not applied to the new.
type followed struct{ seq int64 }

func startFollower(b *Bus, log *slog.Logger) *follower {
	f := &follower{
		bus: b, log: log, fanned: map[string]*followed{}, pending: map[string]int64{},
		wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f
}

// stop ends the follower's goroutine and waits for it.
func (f *follower) stop() {
	f.stopOnce.Do(f.cancel)
	<-f.done
}

// startLocked follows a session from seq, the last event committed before
// its subscriber registers, unless it is followed already; bus.mu is held.
//
// Why Subscribe's argument still holds: every event with a seq above the
// starting point is fanned out once it is committed, because its commit
// comes after this call: a local commit reaches committedFollowed, a
// remote one's notification reaches Follow, both after the session is
// followed, and the follower reads the log from the last seq fanned out,
// so no event above the starting point is skipped; an event at or below it
// was committed before the subscriber registered, so its replay, which reads
// the log after registering, returns it. A session already followed stands
// at a seq fanned out or read as committed before this registration: the
// same holds. What is both read and queued is dropped by seq (Next).
func (f *follower) startLocked(sessionID string, seq int64) {
	if f.fanned[sessionID] == nil {
		f.fanned[sessionID] = &followed{seq: seq}
	}
}

// forgetLocked stops following a session whose last subscriber left;
// bus.mu is held.
func (f *follower) forgetLocked(sessionID string) {
	delete(f.fanned, sessionID)
	delete(f.pending, sessionID)
}

// markLocked asks the goroutine to read a session up to at least seq;
// bus.mu is held.
func (f *follower) markLocked(sessionID string, seq int64) {
	if seq > f.pending[sessionID] {
		f.pending[sessionID] = seq
	}
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// committedFollowed is the Log's commit callback on a following bus: it
// counts the events and hands them on at once when they continue the
// session's fan-out; after a gap (another process committed in between, or
// the session was followed from a point before them) the goroutine reads
// the log, which holds the missing events.
func (b *Bus) committedFollowed(envs []Envelope) {
	if len(envs) == 0 {
		return
	}
	b.countStored(envs)
	f := b.follower
	b.mu.Lock()
	defer b.mu.Unlock()
	s := envs[0].SessionID
	fw := f.fanned[s]
	last := envs[len(envs)-1].Seq
	if fw == nil || b.closed || last <= fw.seq {
		return
	}
	if envs[0].Seq == fw.seq+1 {
		b.offerLocked(envs)
		fw.seq = last
		return
	}
	f.markLocked(s, last)
}

// Follow tells a following bus that the log of a session holds events up to
// seq: if the session has subscribers and seq is past what they were
// handed, the follower reads the log after it and fans the events out. It
// never blocks. A bus that does not follow ignores it.
func (b *Bus) Follow(sessionID string, seq int64) {
	f := b.follower
	if f == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if fw := f.fanned[sessionID]; fw != nil && !b.closed && seq > fw.seq {
		f.markLocked(sessionID, seq)
	}
}

// FollowAll makes a following bus read the log of every session it
// follows: after its listener reconnected, notifications sent meanwhile
// were lost.
func (b *Bus) FollowAll() {
	f := b.follower
	if f == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for s := range f.fanned {
		f.markLocked(s, math.MaxInt64)
	}
}

// Notified is Follow for a notification payload on NotifyChannel. A payload
// it cannot read (someone else's on the channel) is ignored.
func (b *Bus) Notified(payload string) {
	s, seq, ok := parseNotifyPayload(payload)
	if !ok {
		if b.follower != nil {
			b.follower.log.Debug("event bus: notification ignored: not <session>:<seq>",
				"channel", NotifyChannel, "payload_bytes", len(payload))
		}
		return
	}
	b.Follow(s, seq)
}

// run is the follower's goroutine: it reads the sessions marked pending,
// one at a time, until stop. A read that fails leaves its session pending
// and is tried again after followRetry.
func (f *follower) run() {
	defer close(f.done)
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		}
		f.bus.mu.Lock()
		work := f.pending
		f.pending = map[string]int64{}
		f.bus.mu.Unlock()
		failed := false
		for s, seq := range work {
			if err := f.catchUp(s, seq); err != nil {
				if f.ctx.Err() != nil {
					return
				}
				f.log.Error("event bus: events not read for the live subscribers, trying again",
					"session_id", s, "retry_in", followRetry, "error", err)
				failed = true
				f.bus.mu.Lock()
				if f.fanned[s] != nil {
					f.markLocked(s, seq)
				}
				f.bus.mu.Unlock()
			}
		}
		if failed {
			timer := time.NewTimer(followRetry)
			select {
			case <-f.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}

// catchUp reads the log of a session after the last seq fanned out, up to
// its end, and fans the events out, unless the session is no longer
// followed or already stands at seq.
func (f *follower) catchUp(sessionID string, seq int64) error {
	for {
		f.bus.mu.Lock()
		fw := f.fanned[sessionID]
		if fw == nil || fw.seq >= seq {
			f.bus.mu.Unlock()
			return nil
		}
		from := fw.seq
		f.bus.mu.Unlock()
		page, err := f.bus.log.After(f.ctx, sessionID, from, nil, MaxPage)
		if err != nil {
			return err
		}
		f.bus.mu.Lock()
		if f.fanned[sessionID] != fw {
			// Forgotten and followed again meanwhile: the new state may
			// stand before the notified seq, so read again for it.
			f.bus.mu.Unlock()
			continue
		}
		full := len(page) == MaxPage
		// A local commit may have been handed on meanwhile.
		for len(page) > 0 && page[0].Seq <= fw.seq {
			page = page[1:]
		}
		if len(page) > 0 {
			f.bus.offerLocked(page)
			fw.seq = page[len(page)-1].Seq
		}
		f.bus.mu.Unlock()
		if !full {
			return nil
		}
	}
}
