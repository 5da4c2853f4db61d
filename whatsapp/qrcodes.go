package whatsapp

import (
	"context"
	"time"
)

// The QR codes of a pairing client, shown in turn. whatsmeow's own
// GetQRChannel cannot be paused: it keeps replacing codes while the passkey
// step runs and disconnects the client when they run out (about 160 s after
// the first), killing an exchange a person may still be in the middle of.
// So the session rotates the codes of events.QR itself, with whatsmeow's
// timing (the first of six codes 60 s, the others 20 s), holds still while
// the passkey step runs, and ends the pairing when the codes run out.

const (
	qrFirstTimeout = 60 * time.Second
	qrNextTimeout  = 20 * time.Second
)

// qrRotation is what the client's event handler tells the rotation.
type qrRotation struct {
	codes       chan []string // a new set of codes (events.QR)
	hold        chan bool     // true while the passkey step runs
	first, next time.Duration // how long the first of six codes and the others show
}

// QRTimeouts are how long the first of six QR codes shows, and each of the
// others; zero is whatsmeow's timing (60 s, 20 s). Tests shorten it to see
// a code replaced, or the codes run out, without waiting minutes.
type QRTimeouts struct{ First, Next time.Duration }

func newQRRotation(t QRTimeouts) *qrRotation {
	q := &qrRotation{codes: make(chan []string), hold: make(chan bool), first: qrFirstTimeout, next: qrNextTimeout}
	if t.First > 0 {
		q.first = t.First
	}
	if t.Next > 0 {
		q.next = t.Next
	}
	return q
}

// qrEvent hands new codes, or a hold, to the rotation; nothing once the
// rotation has ended.
func (r *clientRun) qrEvent(codes []string, hold *bool) {
	if r.qr == nil {
		return
	}
	switch {
	case codes != nil:
		select {
		case r.qr.codes <- codes:
		case <-r.qrCtx.Done():
		}
	case hold != nil:
		select {
		case r.qr.hold <- *hold:
		case <-r.qrCtx.Done():
		}
	}
}

// rotateQR shows the client's codes in turn until ctx ends (the client was
// detached) or they run out, which ends the pairing.
func (r *clientRun) rotateQR(ctx context.Context) {
	defer r.m.wg.Done()
	var codes []string
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	held, running := false, false
	next := func(first bool) {
		code := codes[0]
		codes = codes[1:]
		timeout := r.qr.next
		if first && len(codes) == 5 {
			timeout = r.qr.first
		}
		r.showQR(code, first)
		timer.Reset(timeout)
		running = true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-r.qr.codes:
			codes, held = c, false
			if len(codes) > 0 {
				timer.Stop()
				next(true)
			}
		case h := <-r.qr.hold:
			held = h
			if held {
				timer.Stop()
				running = false
			} else if !running {
				timer.Reset(r.qr.next) // the code shown gets a fresh while
				running = true
			}
		case <-timer.C:
			running = false
			if r.pairedDevice() {
				return // the codes are over: the device is linked, and stays
			}
			if held {
				continue
			}
			if len(codes) == 0 {
				r.qrTimedOut()
				return
			}
			next(false)
		}
	}
}

// pairedDevice reports whether the session has its device (PairSuccess
// gave it a JID): its pairing is over, and so is the rotation, which would
// otherwise end the linked session when its codes ran out.
func (r *clientRun) pairedDevice() bool {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return !r.s.st.jid.IsEmpty()
}

// qrTimedOut ends a pairing whose QR codes ran out, as whatsmeow's QR
// channel did: the client is disconnected.
func (r *clientRun) qrTimedOut() {
	r.end(StatusDisconnected, pairingTimeoutReason, false)
}

// showQR makes code the session's current QR code. The first code of a
// fresh set also ends a passkey step: WhatsApp offers new codes when it
// refused the assertion or the challenge expired.
func (r *clientRun) showQR(code string, fresh bool) {
	r.update(func(s *session) bool {
		if !s.st.jid.IsEmpty() || (s.st.status != StatusConnecting && s.st.status != StatusPairing) {
			return false // paired meanwhile
		}
		s.st.status, s.st.qr = StatusPairing, code
		if fresh {
			s.st.passkey = PasskeyStep{}
		}
		return true
	})
}
