package whatsapp

// The life of a session's clients: loading sessions, starting, stopping and
// closing clients.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"

	"github.com/wagraph/wagraph/internal/fault"
)

// closeGrace is how long a client whose stream the server ended is given
// to be closed by the server before closeLater closes it.
const closeGrace = time.Second

// closeLater ends a detached cli whose stream the server ended, once the
// server has had closeGrace to close the socket itself: it disconnects the
// client (nothing left to do when the server did close it) and ends its QR
// watcher (stop). Disconnecting at once would race with the server's close,
// and that is a data race inside whatsmeow (FrameSocket.closed, .conn and
// .OnDisconnect are read or written unlocked); so is polling IsConnected.
// Close waits for these timers.
func (m *Manager) closeLater(cli *whatsmeow.Client, stop context.CancelFunc) {
	closeNow := func() {
		cli.Disconnect()
		stop()
	}
	m.mu.Lock()
	if m.closed { // an event that slipped past Close: its own goroutine waits
		m.mu.Unlock()
		time.Sleep(closeGrace)
		closeNow()
		return
	}
	m.wg.Add(1)
	time.AfterFunc(closeGrace, func() {
		defer m.wg.Done()
		closeNow()
	})
	m.mu.Unlock()
}

// forEach calls fn(0..n-1), parallelStarts at a time, and waits for all.
func forEach(n int, fn func(i int)) {
	sem := make(chan struct{}, parallelStarts)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// lockSession returns the session, loaded from the StatusStore when the
// manager does not hold it yet, with its opMu locked.
func (m *Manager) lockSession(ctx context.Context, id string) (*session, error) {
	for {
		s, err := m.load(ctx, id)
		if err != nil {
			return nil, err
		}
		s.opMu.Lock()
		s.mu.Lock()
		deleted := s.deleted
		s.mu.Unlock()
		if !deleted {
			return s, nil
		}
		s.opMu.Unlock() // deleted while we waited: look it up again
	}
}

// load returns the session, read from the StatusStore when the manager
// does not hold it yet.
//
// A session is deleted from the store first, then from the manager
// (Delete). A read of the store that began before the record went can still
// find it, and inserting what it found after Delete ran would bring the
// session back for good. So the insert is refused, and the store read
// again, when any Delete ran since the read began: a read that begins after
// a Delete's count begins after its record is gone, and an insert made
// before the count is removed by that Delete.
func (m *Manager) load(ctx context.Context, id string) (*session, error) {
	for {
		m.mu.Lock()
		s, closed, deletions := m.sessions[id], m.closed, m.deletions
		m.mu.Unlock()
		if closed {
			return nil, errClosed
		}
		if s != nil {
			return s, nil
		}
		rec, found, err := m.statuses.LoadStatus(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("session %s: load status: %w", id, err)
		}
		if !found {
			return nil, fault.New(fault.NotFound, "session %s not found", id)
		}
		m.mu.Lock()
		switch cur := m.sessions[id]; {
		case m.closed:
			m.mu.Unlock()
			return nil, errClosed
		case m.deletions != deletions:
			m.mu.Unlock()
			continue
		case cur != nil:
			m.mu.Unlock()
			return cur, nil
		}
		s = newSession(id, m.log.With("session_id", id), rec)
		m.sessions[id] = s
		m.mu.Unlock()
		return s, nil
	}
}

// connect starts a client for s unless one is already connecting, pairing
// or connected. With restoring set it only logs in linked devices and never
// starts pairing. s.opMu must be held.
func (m *Manager) connect(ctx context.Context, s *session, restoring bool) error {
	if m.isClosed() {
		return errClosed
	}
	s.mu.Lock()
	cur, status, jid := s.cli, s.st.status, s.st.jid
	s.mu.Unlock()
	if cur != nil {
		switch status {
		case StatusConnecting, StatusPairing, StatusConnected:
			return nil
		}
		// A client left behind: end it without touching the status.
		var stop context.CancelFunc
		m.change(s, nil, func(s *session) bool { _, stop = s.detachLocked(); return true })
		cur.Disconnect()
		if stop != nil {
			stop()
		}
	}
	var dev *store.Device
	if !jid.IsEmpty() {
		d, err := m.store.GetDevice(ctx, jid)
		if err != nil {
			return fmt.Errorf("session %s: load device %s: %w", s.id, jid, err)
		}
		dev = d
	}
	if dev == nil && !jid.IsEmpty() {
		s.log.Warn("the linked device is missing from the device store", "jid", jid.String())
		m.change(s, nil, func(s *session) bool {
			s.st.jid, s.st.lid, s.st.status = jidNone, jidNone, StatusDisconnected
			s.st.reason = "the linked device is missing from the device store: connect to pair again"
			return true
		})
	}
	if dev == nil && restoring {
		return nil
	}
	h, err := m.clientHTTP(ctx, s)
	if err != nil {
		return err
	}
	if dev == nil {
		dev = m.store.NewDevice()
	}
	return m.start(s, dev, h)
}

// clientHTTP is the HTTP of s's next client: the manager's, or, when the
// ProxySource names a proxy for s now, clients of the session's own that
// go through it. A proxy that cannot be used fails the connect (the
// session DISCONNECTED, saying why) rather than connecting without it,
// which would show WhatsApp the server's own address.
func (m *Manager) clientHTTP(ctx context.Context, s *session) (ClientHTTP, error) {
	if m.proxies == nil {
		return m.http, nil
	}
	proxyURL, err := m.proxies.Proxy(ctx, s.id)
	if err != nil {
		return ClientHTTP{}, fmt.Errorf("session %s: read its proxy: %w", s.id, err)
	}
	if proxyURL == "" {
		return m.http, nil
	}
	h, err := m.http.via(proxyURL)
	if err != nil {
		m.change(s, nil, func(s *session) bool {
			s.st.end(StatusDisconnected, "could not connect: "+err.Error())
			return true
		})
		f := fault.InvalidField("proxy", "session %s: %v", s.id, err)
		f.Cause = err
		return ClientHTTP{}, f
	}
	return h, nil
}

// start builds and connects the client of dev for s, over h.
func (m *Manager) start(s *session, dev *store.Device, h ClientHTTP) error {
	linked := dev.ID != nil
	cli := whatsmeow.NewClient(dev, newWALogger(s.log, "whatsmeow"))
	run := &clientRun{m: m, s: s, cli: cli}
	if linked {
		// A store failure must not be acknowledged (storefail.go).
		m.installStoreGuard(s, cli, dev)
	} else {
		// A device being paired has no stores yet: they are made as the
		// pairing is saved, and guarded there (guardOnSave).
		dev.Container = &guardOnSave{DeviceContainer: dev.Container, guard: func(d *store.Device) { m.installStoreGuard(s, cli, d) }}
	}
	cli.BackgroundEventCtx = m.ctx
	cli.SynchronousAck = true
	keepSentForRetries(cli) // answered after a restart too (retrystore.go)
	// A message whose event could not be stored is not acknowledged, so
	// WhatsApp sends it again; the Signal session has already advanced, so
	// the second copy only decrypts from whatsmeow's buffer of decrypted
	// plaintexts (without it whatsmeow drops it as an old counter).
	cli.EnableDecryptedEventBuffer = true
	// History sync blobs are downloaded in the handler of their
	// notification (history.go), so that their events are stored before
	// the phone is told the sync arrived and the blob is deleted.
	cli.ManualHistorySyncDownload, cli.DisableManualHistorySyncReceipt = true, true
	// What the phone gives a new device in app state (its name, chats
	// archived, pinned, muted, read, its contacts) comes in the device's
	// first fetch of each collection, a full sync: its events are the
	// session's like any later change.
	cli.EmitAppStateEventsOnFullSync = true
	cli.EnableAutoReconnect = true
	cli.InitialAutoReconnect = linked // a network outage at start retries in the background
	cli.AutoReconnectHook = func(err error) bool {
		var perr *ProxyError
		if errors.As(err, &perr) && !run.connected.Load() {
			// whatsmeow retries a linked device's first connect in the
			// background (InitialAutoReconnect): through a proxy that
			// cannot be used the connect fails instead, saying why.
			s.log.Warn("connecting through the proxy failed", "err", perr)
			run.end(StatusDisconnected, unreachable(err), false)
			return false
		}
		if cli.AutoReconnectErrors > maxReconnectSteps {
			cli.AutoReconnectErrors = maxReconnectSteps
		}
		failures := cli.AutoReconnectErrors
		s.log.Warn("reconnect failed", "failures", failures, "err", err)
		m.change(s, cli, func(s *session) bool {
			if s.st.status != StatusConnecting {
				return false
			}
			s.st.reason = fmt.Sprintf("the connection was lost: reconnecting (%d attempts failed)", failures)
			if perr != nil {
				s.st.reason += ": " + unreachable(err)
			}
			return true
		})
		return m.ctx.Err() == nil && s.current(cli)
	}
	m.announce(cli)
	h.Use(cli)
	if m.point != nil {
		m.point(cli)
	}
	cli.AddEventHandlerWithSuccessStatus(run.handleEvent)
	// stop ends the QR rotation of a pairing client, and closes the idle
	// connections of a proxied session's own HTTP clients: every path
	// that ends a client calls it once the client is closed. It is not the
	// context of the client itself: whatsmeow still deletes a logged-out
	// device with that one after the handlers have seen LoggedOut.
	qrCtx, stopQR := context.WithCancel(m.ctx)
	stop := func() {
		stopQR()
		h.closeIdle()
	}
	if !linked {
		run.qr, run.qrCtx = newQRRotation(m.qrTimeouts), qrCtx
	}
	pushName := dev.PushName // read before the client runs
	run.named = newNameSignal(linked && (pushName != "" || m.appStateFetched(s, dev)))
	attached, _ := m.change(s, nil, func(s *session) bool {
		s.cli, s.stop, s.media, s.named = cli, stop, h.media, run.named
		s.st.status, s.st.reason, s.st.qr, s.st.pairingCode, s.st.passkey = StatusConnecting, "", "", "", PasskeyStep{}
		if !linked {
			s.st.jid, s.st.lid, s.st.pushName = jidNone, jidNone, ""
		} else if s.st.pushName == "" {
			s.st.pushName = pushName
		}
		return true
	})
	if !attached { // deleted meanwhile: a client started now would be nobody's to close
		stop()
		return fault.New(fault.NotFound, "session %s not found", s.id)
	}
	if run.qr != nil {
		m.wg.Add(1)
		go run.rotateQR(qrCtx)
	}
	if err := cli.ConnectContext(m.ctx); err != nil {
		reason := unreachable(err)
		run.end(StatusDisconnected, reason, false)
		return fault.Wrap(err, fault.WhatsAppError, "session %s %s", s.id, reason)
	}
	return nil
}

// unreachable is the reason of a session whose connect failed with err:
// through a proxy, what the proxy did (never its password).
func unreachable(err error) string {
	if perr := (*ProxyError)(nil); errors.As(err, &perr) {
		return "could not reach WhatsApp " + perr.Error()
	}
	return "could not reach WhatsApp"
}

// stopClient ends the session's client, if any: DISCONNECTED with reason
// (LOGGED_OUT stays), the connection closed. s.opMu must be held.
func (m *Manager) stopClient(s *session, reason string) {
	var cli *whatsmeow.Client
	var stop context.CancelFunc
	m.change(s, nil, func(s *session) bool {
		if s.cli == nil {
			if s.st.status == StatusConnecting && recovering(s.st.reason) {
				s.st.end(StatusDisconnected, reason) // its recovery (storefail.go) then gives up
				return true
			}
			return false
		}
		cli, stop = s.detachLocked()
		if s.st.status != StatusLoggedOut {
			s.st.end(StatusDisconnected, reason)
		}
		return true
	})
	if cli != nil {
		cli.Disconnect()
		stop()
	}
}

// client returns the session's client when it is CONNECTED: the entry point
// of every operation that talks to WhatsApp.
func (m *Manager) client(sessionID string) (*whatsmeow.Client, error) {
	m.mu.Lock()
	s := m.sessions[sessionID]
	m.mu.Unlock()
	if s == nil {
		return nil, fault.New(fault.NotConnected, "session %s is not connected (status: %s)", sessionID, StatusDisconnected)
	}
	return s.connectedClient()
}

// classify turns a whatsmeow failure of action into a fault that keeps err
// as its cause: the transports log it, the client reads only the message.
func classify(id, action string, err error) error {
	var iq *whatsmeow.IQError
	switch {
	case errors.Is(err, whatsmeow.ErrPhoneNumberTooShort), errors.Is(err, whatsmeow.ErrPhoneNumberIsNotInternational):
		f := fault.InvalidField("number", "number must be a phone number in international format without '+'")
		f.Cause = err
		return f
	case errors.As(err, &iq) && iq.Code != 0:
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s: WhatsApp refused to %s (%d %s)", id, action, iq.Code, iq.Text)
	case errors.Is(err, whatsmeow.ErrIQTimedOut), errors.Is(err, context.DeadlineExceeded):
		return fault.Wrap(err, fault.WhatsAppTimeout, "session %s: WhatsApp did not answer in time to %s", id, action)
	default:
		return fault.Wrap(err, fault.WhatsAppError, "session %s could not %s: the connection to WhatsApp failed", id, action)
	}
}
