package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/textrule"
)

var jidNone = types.EmptyJID

// session is one session of the manager: its state and its current client.
// See Manager for the locks.
type session struct {
	id  string
	log *slog.Logger // carries session_id

	opMu   sync.Mutex
	emitMu sync.Mutex
	// appState is the turn to write the account's app state (account.go):
	// a one-slot semaphore rather than a mutex, so a caller waiting for it
	// gives up when its request ends.
	appState chan struct{}
	polls    pollMemory   // poll.go: the options of the polls seen, to name votes
	retries  mediaRetries // mediaretry.go: the media retries asked for
	// recipients are the numbers found on WhatsApp lately (recipients.go).
	recipients recipientMemory
	// calls are the calls the session was offered (callmemory.go).
	calls callMemory

	mu        sync.Mutex
	cli       *whatsmeow.Client  // nil when no connection is running
	media     *http.Client       // cli's media client: downloads outside whatsmeow (lookups.go)
	named     *nameSignal        // cli's device has its profile name (pushname.go)
	stop      context.CancelFunc // ends cli's QR watcher
	st        sessionState
	stored    StatusRecord  // the last record persisted
	published connState     // the last connection.update published
	changed   chan struct{} // closed and replaced at every change
	deleted   bool
	// moved is set with deleted when the session was released to another
	// process of a cluster (Release) rather than deleted.
	moved bool
	// recovering is the client whose failure is being recovered from
	// (storefail.go): one recovery per client. recoveryStreak counts the
	// recoveries that came close together, the last at lastRecovery.
	recovering     *whatsmeow.Client
	recoveryStreak int
	lastRecovery   time.Time

	storeFailures atomic.Int64 // failed writes of events and statuses (storeFailed)
	// limits is what WhatsApp said of the account's limits (limits.go),
	// once limitsKnown: heard by this process; the LimitStore has it else.
	limits      Limits
	limitsKnown bool
}

// sessionState is the in-memory state of a session.
type sessionState struct {
	status        Status
	reason        string
	qr            string
	pairingCode   string
	passkey       PasskeyStep // the passkey step while PAIRING (passkey.go); zero when none
	jid, lid      types.JID
	pushName      string
	pushNameAt    time.Time // when pushName was written: older events do not replace it
	connectedAt   time.Time
	keepaliveLost bool // CONNECTING because keepalives failed, not because the socket closed
}

// connState is the data of connection.update.
type connState struct {
	status                  Status
	qr, reason, pairingCode string
	passkey                 PasskeyStep
}

func (c connState) data() *payload.Connection {
	return &payload.Connection{Status: string(c.status), QR: payload.Text(c.qr), Reason: payload.Text(c.reason),
		PairingCode: payload.Text(c.pairingCode), Passkey: c.passkey.data()}
}

// newSession builds a session from its persisted record. A status left
// behind by a process that did not close cleanly (CONNECTING, PAIRING,
// CONNECTED with no client running) reads DISCONNECTED; the next change
// persists and publishes the correction.
func newSession(id string, log *slog.Logger, rec StatusRecord) *session {
	// What was last published is taken to be what the record says, reason
	// included: a session loaded as it was saved publishes nothing new.
	s := &session{id: id, log: log, stored: rec, published: connState{status: rec.Status, reason: rec.Reason}, changed: make(chan struct{}), appState: make(chan struct{}, 1)}
	s.st = sessionState{pushName: rec.PushName, connectedAt: rec.ConnectedAt}
	s.st.status, s.st.reason = loadedStatus(rec)
	if rec.Status == "" {
		s.published.status = StatusDisconnected
	}
	if rec.JID != "" {
		jid, err := types.ParseJID(rec.JID)
		if err != nil || jid.User == "" {
			log.Warn("ignoring the stored device JID", "jid", rec.JID, "err", err)
		} else {
			s.st.jid = jid
		}
	}
	return s
}

// The reasons of a session the gateway itself stopped: shutdownReason as
// it shuts down (Close); RestartedReason as a process that loads the
// session later tells it, and of a status a process left behind.
const (
	shutdownReason  = "the gateway is shutting down"
	RestartedReason = "the gateway restarted"
)

// loadedStatus is the status and reason a stored record stands for once the
// session is loaded, before any client runs: DISCONNECTED and LOGGED_OUT
// keep the reason saved with them (a pairing that timed out still says so),
// except that a shutdown is told as the restart it now is; a status left
// behind by a process that did not close cleanly (CONNECTING, PAIRING,
// CONNECTED) is DISCONNECTED, with the restart as the reason.
func loadedStatus(rec StatusRecord) (Status, string) {
	switch rec.Status {
	case StatusDisconnected, StatusLoggedOut:
		if rec.Reason == shutdownReason {
			return rec.Status, RestartedReason
		}
		return rec.Status, rec.Reason
	case "":
		return StatusDisconnected, ""
	}
	return StatusDisconnected, RestartedReason
}

func (st *sessionState) record() StatusRecord {
	rec := StatusRecord{Status: st.status, Reason: st.reason, PushName: st.pushName, ConnectedAt: st.connectedAt}
	if !st.jid.IsEmpty() {
		rec.JID = st.jid.String()
	}
	return rec
}

func (st *sessionState) connection() connState {
	return connState{status: st.status, qr: st.qr, reason: st.reason, pairingCode: st.pairingCode, passkey: st.passkey}
}

func (st *sessionState) public() SessionState {
	p := SessionState{
		Status: st.status, Reason: st.reason, QRCode: st.qr, QRImage: qrDataURL(st.qr),
		PairingCode: st.pairingCode, PushName: st.pushName, ConnectedAt: st.connectedAt,
		Passkey: st.passkey,
	}
	if !st.jid.IsEmpty() {
		p.JID, p.Phone = st.jid.String(), st.jid.User
	}
	if !st.lid.IsEmpty() {
		p.LID = st.lid.String()
	}
	return p
}

// loggedOut puts the state in LOGGED_OUT: the device is gone.
func (st *sessionState) loggedOut(reason string) {
	st.status, st.reason, st.qr, st.pairingCode, st.passkey = StatusLoggedOut, reason, "", "", PasskeyStep{}
	st.jid, st.lid, st.pushName, st.pushNameAt, st.keepaliveLost = jidNone, jidNone, "", time.Time{}, false
}

// end puts the state in status (DISCONNECTED or LOGGED_OUT) with reason.
func (st *sessionState) end(status Status, reason string) {
	if status == StatusLoggedOut {
		st.loggedOut(reason)
		return
	}
	st.status, st.reason, st.qr, st.pairingCode, st.passkey, st.keepaliveLost = status, reason, "", "", PasskeyStep{}, false
}

// detachLocked forgets the client and returns it with the function that
// ends its QR watcher (nil, nil when there was no client). s.mu must be held.
func (s *session) detachLocked() (*whatsmeow.Client, context.CancelFunc) {
	cli, stop := s.cli, s.stop
	s.cli, s.stop = nil, nil
	return cli, stop
}

func (s *session) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// current reports whether cli is still the session's client.
func (s *session) current(cli *whatsmeow.Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cli == cli
}

// connectedClient returns the client of a CONNECTED session.
func (s *session) connectedClient() (*whatsmeow.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cli == nil || s.st.status != StatusConnected {
		return nil, fault.New(fault.NotConnected, "session %s is not connected (status: %s)", s.id, s.st.status)
	}
	return s.cli, nil
}

// waitFor waits until ok holds for the state and returns the state and the
// client of that moment.
func (s *session) waitFor(ctx context.Context, ok func(*sessionState) bool) (sessionState, *whatsmeow.Client, error) {
	for {
		s.mu.Lock()
		st, cli, ch, deleted := s.st, s.cli, s.changed, s.deleted
		done := ok(&s.st)
		s.mu.Unlock()
		if deleted {
			return st, nil, fault.New(fault.NotFound, "session %s not found", s.id)
		}
		if done {
			return st, cli, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, cli, ctx.Err()
		}
	}
}

// change applies fn to s (with s.mu held) when cli is still the session's
// client (cli nil: an operation, whatever the client), then persists the
// record if it changed, publishes connection.update if status, QR or reason
// changed, and publishes extra. fn returns false to change nothing. The
// error is that of persisting or publishing: the change is made in memory
// regardless.
func (m *Manager) change(s *session, cli *whatsmeow.Client, fn func(*session) bool, extra ...Event) (bool, error) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	if s.deleted || (cli != nil && (s.cli != cli || m.closing.Load())) || !fn(s) {
		s.mu.Unlock()
		return false, nil
	}
	rec, conn, before := s.st.record(), s.st.connection(), s.published
	save, publish := !rec.equal(s.stored), conn != before
	if publish {
		s.published = conn
	}
	s.notifyLocked()
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var errs []error
	if save {
		if err := m.statuses.SaveStatus(ctx, s.id, rec); err != nil {
			s.log.Error("persisting the session status failed", "status", rec.Status, "err", err)
			errs = append(errs, err)
		} else {
			s.mu.Lock()
			s.stored = rec
			s.mu.Unlock()
		}
	}
	if publish {
		if conn.status != before.status {
			s.log.Info("session status", "status", conn.status, "reason", conn.reason)
		}
		extra = append([]Event{{Kind: KindConnectionUpdate, Data: conn.data()}}, extra...)
	}
	for _, ev := range extra {
		if err := m.pub.Publish(ctx, s.id, ev); err != nil {
			s.log.Error("publishing an event failed", "kind", ev.Kind, "err", err)
			errs = append(errs, fmt.Errorf("publish %s: %w", ev.Kind, err))
		}
	}
	err := errors.Join(errs...)
	if err != nil {
		m.storeFailed(s)
	}
	return true, err
}

// clientRun is one client of a session, from Connect until it is detached.
// Its events change the session only while it is the session's client.
type clientRun struct {
	m   *Manager
	s   *session
	cli *whatsmeow.Client
	// paired is set when this client paired the device: its first login
	// lists the account's groups (derived.go).
	paired atomic.Bool
	// named is closed once the device has its profile name (pushname.go).
	named *nameSignal
	// connected is set once this client has logged in: from then on a
	// failure to reach WhatsApp through the proxy is retried, as any
	// lost connection is (start).
	connected atomic.Bool
	// qr rotates the QR codes of a pairing client until qrCtx ends
	// (qrcodes.go); nil for a linked device.
	qr    *qrRotation
	qrCtx context.Context
}

// handleEvent is the client's event handler, registered with success status
// and SynchronousAck: it returns false when what the event produced could
// not be stored, and whatsmeow then does not acknowledge the stanza. The
// session then reconnects at once (storefail.go), so that WhatsApp sends
// the stanza again now rather than at some later login.
func (r *clientRun) handleEvent(raw any) bool {
	if r.m.closing.Load() || !r.s.current(r.cli) {
		return false // a client that is over stores nothing: WhatsApp re-sends to the current one
	}
	failures := r.s.storeFailures.Load()
	if r.dispatch(raw) {
		return true
	}
	reason := reasonHandlingFailed
	if r.s.storeFailures.Load() != failures {
		reason = reasonEventsFailed
	}
	r.m.recoverFrom(r.s, r.cli, reason, fmt.Errorf("handling %T failed", raw))
	return false
}

// dispatch hands an event to its handler.
func (r *clientRun) dispatch(raw any) bool {
	switch evt := raw.(type) {
	case *events.QR:
		r.qrEvent(evt.Codes, nil)
		return true
	case *events.PairPasskeyRequest:
		return r.handlePasskeyRequest(evt)
	case *events.PairPasskeyConfirmation:
		return r.handlePasskeyConfirmation(evt)
	case *events.PairPasskeyError:
		return r.handlePasskeyError(evt)
	case *events.PairSuccess:
		return r.handlePairSuccess(evt)
	case *events.PairError:
		return r.end(StatusDisconnected, fmt.Sprintf("pairing failed: %v", evt.Error), false)
	case *events.Connected:
		return r.handleConnected()
	case *events.Disconnected:
		return r.handleDisconnected()
	case *events.LoggedOut:
		return r.handleLoggedOut(evt)
	case *events.StreamReplaced:
		return r.end(StatusDisconnected, "another connection of this device replaced this one", true)
	case *events.StreamError:
		return r.handleStreamError(evt)
	case *events.KeepAliveTimeout:
		return r.handleKeepAliveTimeout(evt)
	case *events.KeepAliveRestored:
		return r.handleKeepAliveRestored()
	case *events.TemporaryBan:
		return r.end(StatusDisconnected, evt.String(), true)
	case *events.ConnectFailure:
		if isNetworkReset(evt) {
			return r.handleNetworkReset()
		}
		return r.end(StatusDisconnected, "WhatsApp refused the connection: "+evt.PermanentDisconnectDescription(), true)
	case *events.ClientOutdated:
		return r.handleClientOutdated()
	case *events.PushNameSetting:
		defer r.named.done()
		return r.handlePushName(evt)
	case *events.AppStateSyncComplete:
		return r.handleAppStateSynced(evt)
	case *events.Message:
		return r.handleMessage(evt)
	case *events.Receipt:
		return r.handleReceipt(evt)
	case *events.CallOffer, *events.CallOfferNotice, *events.CallAccept, *events.CallPreAccept,
		*events.CallTransport, *events.CallTerminate, *events.CallReject, *events.CallRelayLatency:
		return r.handleCall(evt)
	case *events.Presence:
		return r.handlePresence(evt)
	case *events.ChatPresence:
		return r.handleChatPresence(evt)
	case *events.OfflineSyncPreview:
		return r.handleOfflineSyncPreview(evt)
	case *events.OfflineSyncCompleted:
		return r.handleOfflineSyncCompleted(evt)
	case *events.UndecryptableMessage:
		return r.handleUndecryptable(evt)
	case *events.MediaRetry:
		return r.handleMediaRetry(evt)
	case *events.Blocklist:
		return r.handleBlocklist(evt)
	case *events.Archive, *events.Pin, *events.Mute, *events.MarkChatAsRead, *events.ClearChat, *events.DeleteChat:
		return r.handleChatState(evt)
	case *events.DeleteForMe, *events.Star:
		return r.handleMessageState(evt)
	case *events.Contact:
		return r.handleContact(evt)
	case *events.PushName, *events.BusinessName, *events.UserAbout, *events.Picture:
		return r.handleUserInfo(evt)
	case *events.JoinedGroup:
		return r.handleJoinedGroup(evt)
	case *events.GroupInfo:
		return r.handleGroupInfo(evt)
	case *events.LabelEdit, *events.LabelAssociationChat, *events.LabelAssociationMessage:
		return r.handleLabel(evt)
	case *events.NotifyAccountReachoutTimelock:
		return r.handleReachoutTimelock(evt)
	}
	return true
}

// update is change for this client.
func (r *clientRun) update(fn func(*session) bool, extra ...Event) bool {
	_, err := r.m.change(r.s, r.cli, fn, extra...)
	return err == nil
}

// end detaches the client and puts the session in status (DISCONNECTED or
// LOGGED_OUT): the connection is over and whatsmeow will not reconnect it.
// serverCloses is for the stanzas after which the server closes the socket
// itself (a stream error, a login failure): the client is then closed only
// if the server has not done so within closeGrace, because whatsmeow's
// Disconnect racing with a socket closing under it is a data race inside
// whatsmeow (NoiseSocket.Stop writes FrameSocket.OnDisconnect unlocked).
func (r *clientRun) end(status Status, reason string, serverCloses bool) bool {
	var stop context.CancelFunc
	ok := r.update(func(s *session) bool {
		_, stop = s.detachLocked()
		s.st.end(status, reason)
		return true
	})
	if stop == nil {
		return ok
	}
	if serverCloses {
		r.m.closeLater(r.cli, stop)
	} else {
		r.cli.Disconnect()
		stop()
	}
	return ok
}

// handleClientOutdated ends a session WhatsApp refused as outdated; the
// keeper then reads the current version, and its listener reconnects the
// refused sessions. That listener may run before this session is
// DISCONNECTED (end waits for the session's previous change to be
// stored, a database round trip), and then misses it: so when a newer
// version is known by the time the session has ended, it reconnects here.
func (r *clientRun) handleClientOutdated() bool {
	refused := r.m.announced()
	ok := r.end(StatusDisconnected, r.m.refusedAsOutdated(), true)
	if r.m.announced() != refused {
		r.m.wg.Go(r.m.reconnectOutdated)
	}
	return ok
}

// pairingTimeoutReason is the reason of a session whose QR codes ran out.
const pairingTimeoutReason = "pairing timed out: no QR code was scanned"

// handlePairSuccess: the device is linked and whatsmeow logs in with it.
// The JID is persisted at once, so a restart logs the device in again.
func (r *clientRun) handlePairSuccess(evt *events.PairSuccess) bool {
	creds := &payload.Creds{
		JID: payload.Text(evt.ID.String()), Phone: payload.Text(evt.ID.User), Platform: payload.Text(evt.Platform),
		BusinessName: payload.Text(evt.BusinessName),
	}
	if !evt.LID.IsEmpty() {
		creds.LID = payload.Text(evt.LID.String())
	}
	r.paired.Store(true)
	return r.update(func(s *session) bool {
		s.st.jid, s.st.lid = evt.ID, evt.LID
		s.st.status, s.st.reason, s.st.qr, s.st.pairingCode, s.st.passkey = StatusConnecting, "", "", "", PasskeyStep{}
		return true
	}, Event{Kind: KindCredsUpdate, Data: creds})
}

func (r *clientRun) handleConnected() bool {
	r.connected.Store(true)
	r.publishOnConnect()
	// whatsmeow wrote the store's LID before dispatching Connected.
	jid, lid := r.cli.Store.GetJID(), r.cli.Store.GetLID()
	r.s.mu.Lock()
	learned := !lid.IsEmpty() && r.s.st.lid != lid
	r.s.mu.Unlock()
	var extra []Event
	if learned {
		extra = append(extra, Event{Kind: KindCredsUpdate, Data: &payload.Creds{JID: payload.Text(jid.String()), LID: payload.Text(lid.String())}})
	}
	return r.update(func(s *session) bool {
		if !jid.IsEmpty() {
			s.st.jid = jid
		}
		if !lid.IsEmpty() {
			s.st.lid = lid
		}
		s.st.status, s.st.reason, s.st.qr, s.st.pairingCode = StatusConnected, "", "", ""
		s.st.connectedAt, s.st.keepaliveLost = time.Now().UTC(), false
		return true
	}, extra...)
}

// handleDisconnected: the socket closed without being asked to. A linked
// device reconnects by itself (whatsmeow's auto-reconnect, with backoff); a
// pairing connection is over.
func (r *clientRun) handleDisconnected() bool {
	var stop context.CancelFunc
	ok := r.update(func(s *session) bool {
		if s.st.jid.IsEmpty() {
			_, stop = s.detachLocked()
			s.st.end(StatusDisconnected, "the connection was lost while pairing")
			return true
		}
		s.st.status, s.st.reason, s.st.keepaliveLost = StatusConnecting, "the connection was lost: reconnecting", false
		return true
	})
	if stop != nil {
		r.cli.Disconnect()
		stop()
	}
	return ok
}

// handleLoggedOut: the device was unlinked (from the phone, or refused at
// login). whatsmeow deletes its store itself.
func (r *clientRun) handleLoggedOut(evt *events.LoggedOut) bool {
	reason := "the device was removed from the phone"
	if evt.OnConnect {
		reason = "WhatsApp refused the login: " + evt.Reason.String()
	}
	return r.end(StatusLoggedOut, reason, true)
}

// The simulated network (whatsapp/wafake: ResetFailureReason,
// ResetFailureMessage) answers the login of a device it has no record of —
// its state was deleted, or it kept none — with this failure. Real
// WhatsApp never sends it: its servers do not forget a device.
const (
	networkResetReason  = events.ConnectFailureNotFound
	networkResetMessage = "simulated network reset"
	// NetworkResetReason is the status reason of a session the simulated
	// network no longer knows.
	NetworkResetReason = "the simulated network was reset: link the session again"
)

func isNetworkReset(evt *events.ConnectFailure) bool {
	return evt.Reason == networkResetReason && evt.Message == networkResetMessage
}

// handleNetworkReset: the simulated network does not know the device any
// more, so it can only be linked again. whatsmeow keeps the device store
// for an unknown failure; it is deleted here, as after a logout.
func (r *clientRun) handleNetworkReset() bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.m.ctx), storeTimeout)
	defer cancel()
	if err := r.cli.Store.Delete(ctx); err != nil {
		r.s.log.Warn("deleting the device keys the simulated network no longer knows failed", "err", err)
	}
	return r.end(StatusLoggedOut, NetworkResetReason, true)
}

func (r *clientRun) handleStreamError(evt *events.StreamError) bool {
	return r.update(func(s *session) bool {
		if s.st.status != StatusConnected && s.st.status != StatusConnecting {
			return false
		}
		s.st.status, s.st.reason = StatusConnecting, "stream error "+evt.Code+": reconnecting"
		return true
	})
}

func (r *clientRun) handleKeepAliveTimeout(evt *events.KeepAliveTimeout) bool {
	return r.update(func(s *session) bool {
		if s.st.status != StatusConnected && !s.st.keepaliveLost {
			return false
		}
		s.st.status, s.st.keepaliveLost = StatusConnecting, true
		s.st.reason = fmt.Sprintf("WhatsApp is not answering keepalives (%d failed)", evt.ErrorCount)
		return true
	})
}

func (r *clientRun) handleKeepAliveRestored() bool {
	return r.update(func(s *session) bool {
		if !s.st.keepaliveLost {
			return false
		}
		s.st.status, s.st.reason, s.st.keepaliveLost = StatusConnected, "", false
		return true
	})
}

func (r *clientRun) handlePushName(evt *events.PushNameSetting) bool {
	// The name is shown as it is stored (textrule: no NUL), not only
	// after a restart reloads it from the store.
	name := textrule.Clean(evt.Action.GetName())
	return r.update(func(s *session) bool {
		// Not older than the name the session holds (an event without a
		// time is taken as it comes).
		if name == "" || (!evt.Timestamp.IsZero() && !evt.Timestamp.After(s.st.pushNameAt)) {
			return false
		}
		if evt.Timestamp.After(s.st.pushNameAt) {
			s.st.pushNameAt = evt.Timestamp
		}
		if name == s.st.pushName {
			return false
		}
		s.st.pushName = name
		return true
	}, Event{Kind: KindCredsUpdate, Data: &payload.Creds{PushName: payload.Text(name)}})
}
