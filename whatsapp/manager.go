package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the sqlite3 driver of the device store
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/store/sqlstore/upgrades"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// Status is the connection status of a session: the GraphQL SessionStatus.
type Status string

// The statuses of a session.
const (
	StatusDisconnected Status = "DISCONNECTED" // not connected, by request, failure or shutdown
	StatusConnecting   Status = "CONNECTING"   // connecting or logging in, also while reconnecting
	StatusPairing      Status = "PAIRING"      // connected without a device, showing a QR code
	StatusConnected    Status = "CONNECTED"    // logged in: operations work
	StatusLoggedOut    Status = "LOGGED_OUT"   // the device was unlinked; connecting pairs anew
)

// The event kinds the manager publishes (events.md).
const (
	KindConnectionUpdate = "connection.update" // {status, qr?, reason?}
	KindCredsUpdate      = "creds.update"      // {jid?, lid?, phone?, platform?, businessName?, pushName?}
)

// Event is one event of a session, handed to the Publisher: a kind of
// events.md and its data.
type Event struct {
	Kind string
	Data payload.Data
	// Key names the stanza the event stems from, unique within the
	// session, for the events of stanzas WhatsApp re-sends until they are
	// acknowledged (messages, receipts): the log stores one event per key,
	// so a re-sent stanza is the event already stored. "" for the others.
	Key string
	// Message is set on inbound-message.upsert and outbound-message.upsert:
	// the record the app keeps in its message store (delete for everyone
	// finds a message's chat there); and on a successful
	// messages.media-update: the record with its media's new location.
	Message *Message
	// History is set on messaging-history.set: the records of the
	// messages the part carries (Data's messages), which the message
	// store keeps like any other (first record of an id wins).
	History []Message
}

// Message is one sent or received message as the message store keeps it.
type Message struct {
	ID        string
	Chat      string // the chat's JID (a user's phone JID or a group)
	Sender    string // the sender's JID; the account's own for FromMe
	FromMe    bool
	Type      string // events.md: text, image, video, audio, voice, document, sticker, location, contact, reaction, poll, revoke, edit, unknown
	Text      string
	Caption   string
	Timestamp time.Time
	Media     *MediaRef // the attachment of a media message; nil for others and for media that cannot be downloaded
	Poll      *PollSpec // a poll's options (Text is its question); nil for other messages
	ViewOnce  bool      // an image, video or voice note its recipient may open once
}

// Publisher stores and fans out the events of sessions (the app's event
// bus). An error means the event was not stored: the handler then reports a
// failure to whatsmeow, which does not acknowledge the stanza, so WhatsApp
// sends it again. Publish is called in order, one event of a session at a
// time, sometimes from within an operation on that session: it must not call
// the Manager's operations (State is fine).
type Publisher interface {
	Publish(ctx context.Context, sessionID string, ev Event) error
}

// BatchPublisher is a Publisher that also stores several events of a
// session at once, in order, all or none. The manager uses it where one
// operation has several events (a send: outbound-message.upsert and
// messages.send), so that they cost one commit and not one each.
type BatchPublisher interface {
	PublishAll(ctx context.Context, sessionID string, evs []Event) error
}

// StatusRecord is what the manager persists about a session.
type StatusRecord struct {
	Status Status
	// Reason is why the session is in Status when nobody asked for it
	// (SessionState.Reason): saved with the status, so that what ended a
	// session (a pairing that timed out) is still told after a restart.
	Reason      string
	JID         string // the linked device ("491701234567:3@s.whatsapp.net"); "" when none
	PushName    string
	ConnectedAt time.Time // the last time the session logged in; zero before
}

func (r StatusRecord) equal(o StatusRecord) bool {
	return r.Status == o.Status && r.Reason == o.Reason && r.JID == o.JID && r.PushName == o.PushName && r.ConnectedAt.Equal(o.ConnectedAt)
}

// StatusStore persists the status record of each session (the app's
// session table). LoadStatus reports found=false for a session that does not
// exist: the manager then answers fault.NotFound.
type StatusStore interface {
	LoadStatus(ctx context.Context, sessionID string) (rec StatusRecord, found bool, err error)
	SaveStatus(ctx context.Context, sessionID string, rec StatusRecord) error
}

// SessionState is what the manager knows of a session right now.
type SessionState struct {
	Status      Status
	Reason      string // why the session is in Status, when that says more ("stream replaced")
	QRCode      string // the QR code to show while PAIRING
	QRImage     string // QRCode as a data:image/png;base64 URL
	PairingCode string // the code of PairPhone, while PAIRING
	// Passkey is the passkey step while PAIRING, when WhatsApp asks for the
	// account's passkey (passkey.go); the zero step otherwise.
	Passkey     PasskeyStep
	JID         string // the linked device; "" when none
	LID         string // the account's LID, when known
	Phone       string // the account's number
	PushName    string
	ConnectedAt time.Time
}

// ManagerOptions are the dependencies of a Manager.
type ManagerOptions struct {
	Store     *sqlstore.Container // the device stores (OpenStore)
	Logger    *slog.Logger        // nil discards
	Publisher Publisher           // nil: events are dropped
	Statuses  StatusStore         // required
	// Transport carries every client's connections: the chat websocket,
	// the pre-login one and media. The sandbox and tests give a wafake
	// network's (wafake.TransportTo). nil is a clone of
	// http.DefaultTransport: WhatsApp itself.
	Transport http.RoundTripper
	// Point, when set, is called on every new client before it connects,
	// after the manager set its transports up.
	Point func(*whatsmeow.Client)
	// Versions, when set, is the version every client announces; the
	// sessions it refused as outdated reconnect when it learns a newer
	// one. nil announces whatsmeow's own.
	Versions *Versions
	// Observer, when set, is told of the failures an operator must see
	// (/metrics): store failures and messages that could not be decrypted.
	Observer Observer
	// Probe, when set, is asked before a session taken down by a failure
	// reconnects (storefail.go): the database takes writes again.
	Probe WriteProbe
	// Proxies, when set, names each session's proxy at every connect
	// (proxy.go): a session with one gets HTTP clients of its own, over
	// Transport, whose connections go through it. nil: no proxies.
	Proxies ProxySource
	// Limits keeps what WhatsApp said of each account's limits
	// (limits.go); nil: kept in memory only.
	Limits LimitStore
	// QRTimeouts times the QR codes a pairing shows (qrcodes.go); zero is
	// whatsmeow's.
	QRTimeouts QRTimeouts
}

// Observer counts what went wrong in the sessions.
type Observer interface {
	// StoreFailed: a write or read of a store failed (a device store while
	// a stanza was handled, or the store of events and statuses); a stanza
	// being handled was left unacknowledged (storefail.go).
	StoreFailed()
	// Undecryptable: a message arrived that could not be decrypted.
	Undecryptable()
}

type discardObserver struct{}

func (discardObserver) StoreFailed()   {}
func (discardObserver) Undecryptable() {}

// Manager holds one whatsmeow client per session and keeps each session's
// status in memory, in the StatusStore and in the event stream.
//
// Locks: a session's opMu serialises the operations on it (connect,
// disconnect, pair, logout, delete) and is never taken by event handlers;
// emitMu serialises state changes with their persistence and publication;
// mu guards the fields. Order: opMu, emitMu, mu. No whatsmeow call is made
// under emitMu or mu.
type Manager struct {
	store    *sqlstore.Container
	log      *slog.Logger
	pub      Publisher
	statuses StatusStore
	point    func(*whatsmeow.Client)
	http     ClientHTTP
	proxies  ProxySource // nil: no session has a proxy
	versions *Versions

	// ctx is the context of every client: whatsmeow connects, reconnects
	// and handles events with it. Close cancels it once every client is
	// disconnected (cancelling it earlier closes sockets under whatsmeow's
	// feet: a data race inside whatsmeow); closing makes the clients' late
	// events ignored.
	ctx     context.Context
	cancel  context.CancelFunc
	closing atomic.Bool

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	// deletions counts the Delete calls: a load whose read of the
	// StatusStore overlapped one reads again (see load).
	deletions uint64

	wg sync.WaitGroup // the QR watchers, closeLater's timers, running Deletes and store recoveries

	obs    Observer
	probe  WriteProbe // nil: the device store's write alone is the probe
	limits LimitStore // nil: limits kept in memory only

	// storeFault, set by tests before any client starts, fails the device
	// store's calls while it returns an error (storefail.go).
	storeFault func() error
	// storeKeepUp, set by tests, keeps a session up after a store failure:
	// the stanza alone must then stay unacknowledged.
	storeKeepUp bool
	qrTimeouts  QRTimeouts // the QR rotation's (qrcodes.go)
}

const (
	parallelStarts    = 8                // sessions restored or closed at once
	pairWait          = 30 * time.Second // PairPhone's wait for the first QR code
	maxReconnectSteps = 30               // whatsmeow waits 2 s × failures between reconnects: at most a minute
	storeTimeout      = 15 * time.Second // one persist or publish
	deleteTimeout     = time.Minute      // Delete's unlinking and deleting of the keys
)

var errClosed = errors.New("whatsapp: the session manager is closed")

// Idle connections of the whatsmeow store's pool. database/sql keeps 2 by
// default: with many sessions decrypting at once the others were closed on
// release and opened again, once per message (an SQLite open reads the
// schema and runs the DSN's pragmas; each connection's cached statements
// went with it) — a tenth of the server's CPU under goal 3's inbound load.
// Past a burst they close after storeIdleTime.
const (
	storeIdleConns = 32
	storeIdleTime  = time.Minute
)

// OpenStore opens (and creates or upgrades) the whatsmeow device store in the
// SQLite file at path: WAL, a busy timeout, immediate transactions and
// foreign keys, so that many clients can write at once; a statement cache
// per connection (whatsmeow runs the same few queries for every message).
func OpenStore(ctx context.Context, path string, log *slog.Logger) (*sqlstore.Container, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("whatsmeow store path %q: '?' and '#' are not allowed", path)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The device keys are in these files: 0600 (datadir.PrivateSQLite),
	// created so before SQLite would make them 0644 less the umask, and
	// set again once open, the -wal and -shm made.
	if err := datadir.PrivateSQLite(path); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate&_stmt_cache_size=64"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open whatsmeow store %s: %w", path, err)
	}
	db.SetMaxIdleConns(storeIdleConns)
	db.SetConnMaxIdleTime(storeIdleTime)
	st, err := upgradeStore(ctx, db, "sqlite3", path, log)
	if err != nil {
		return nil, err
	}
	if err := datadir.PrivateSQLite(path); err != nil {
		_ = st.Close()
		return nil, err
	}
	return st, nil
}

// upgradeStore makes whatsmeow's store over db (of dialect) and creates or
// upgrades its tables; where names the database in errors.
func upgradeStore(ctx context.Context, db *sql.DB, dialect, where string, log *slog.Logger) (*sqlstore.Container, error) {
	c := sqlstore.NewWithDB(db, dialect, newWALogger(log, "sqlstore"))
	if err := c.Upgrade(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("open whatsmeow store %s: %w", where, err)
	}
	return c, nil
}

// StoreSchemaVersion is the version of whatsmeow's device store tables
// this build creates or upgrades to.
func StoreSchemaVersion() int { return len(upgrades.Table) }

// OpenPostgresStore opens (and creates or upgrades) the whatsmeow device
// store in the PostgreSQL database at url, through driver (the product's
// choice of database/sql driver; whatsmeow's sqlstore only needs its
// dialect). where names the database in errors, url never does: it may
// hold a password. whatsmeow.PostgresArrayWrapper stays unset (it is a
// package variable of whatsmeow's): sqlstore then uses its queries without
// array parameters.
func OpenPostgresStore(ctx context.Context, driver, url, where string, log *slog.Logger) (*sqlstore.Container, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := sql.Open(driver, url)
	if err != nil {
		return nil, fmt.Errorf("open whatsmeow store in %s: %w", where, err)
	}
	// Every connection is a server process: the pool is bounded.
	db.SetMaxOpenConns(storeIdleConns)
	db.SetMaxIdleConns(storeIdleConns / 2)
	db.SetConnMaxIdleTime(storeIdleTime)
	return upgradeStore(ctx, db, "postgres", "in "+where, log)
}

// NewManager returns a manager with no session running: call RestoreLinked to
// reconnect the linked sessions.
func NewManager(opts ManagerOptions) *Manager {
	if opts.Store == nil || opts.Statuses == nil {
		panic("whatsapp.NewManager: Store and Statuses are required")
	}
	m := &Manager{
		store: opts.Store, log: opts.Logger, pub: opts.Publisher, statuses: opts.Statuses,
		point: opts.Point, versions: opts.Versions, sessions: map[string]*session{}, obs: opts.Observer, probe: opts.Probe,
		proxies: opts.Proxies,
		limits:  opts.Limits, qrTimeouts: opts.QRTimeouts,
	}
	if m.obs == nil {
		m.obs = discardObserver{}
	}
	m.http = NewClientHTTP(opts.Transport)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.pub == nil {
		m.pub = discardPublisher{}
	}
	if m.versions != nil {
		m.versions.OnNewer(m.reconnectOutdated)
	}
	return m
}

type discardPublisher struct{}

func (discardPublisher) Publish(context.Context, string, Event) error { return nil }

// State returns what the manager knows of a session. A session the manager
// has not loaded (neither restored nor connected) is DISCONNECTED.
func (m *Manager) State(sessionID string) SessionState {
	m.mu.Lock()
	s := m.sessions[sessionID]
	m.mu.Unlock()
	if s == nil {
		return SessionState{Status: StatusDisconnected}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.public()
}

// Statuses lists every status a session can have, in the order of the
// GraphQL SessionStatus.
func Statuses() []Status {
	return []Status{StatusDisconnected, StatusConnecting, StatusPairing, StatusConnected, StatusLoggedOut}
}

// CountByStatus counts the sessions of stored (every session's stored
// status, by id) by the status Status would answer for each now: a session
// the manager holds by its state, any other as loading it would read it.
// Every status is in the result, 0 when no session has it.
func (m *Manager) CountByStatus(stored map[string]Status) map[Status]int {
	counts := make(map[Status]int, 5)
	for _, st := range Statuses() {
		counts[st] = 0
	}
	m.mu.Lock()
	held := make(map[string]*session, len(m.sessions))
	for id, s := range m.sessions {
		if _, ok := stored[id]; ok {
			held[id] = s
		}
	}
	m.mu.Unlock()
	for id, st := range stored {
		if s := held[id]; s != nil {
			s.mu.Lock()
			st = s.st.status
			s.mu.Unlock()
		} else {
			st, _ = loadedStatus(StatusRecord{Status: st})
		}
		counts[st]++
	}
	return counts
}

// Status is State for a session that may not be loaded yet: it reads the
// stored record (NOT_FOUND for an unknown session) instead of assuming
// DISCONNECTED.
func (m *Manager) Status(ctx context.Context, sessionID string) (SessionState, error) {
	s, err := m.load(ctx, sessionID)
	if err != nil {
		return SessionState{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.public(), nil
}

// Watch calls fn with the session's state now and again after each change,
// until fn returns false, ctx is done or the session is deleted (NOT_FOUND).
// Changes that happen while fn runs are coalesced: fn sees the latest state,
// so a slow watcher never holds the session up.
func (m *Manager) Watch(ctx context.Context, sessionID string, fn func(SessionState) bool) error {
	s, err := m.load(ctx, sessionID)
	if err != nil {
		return err
	}
	for {
		s.mu.Lock()
		st, ch, deleted, moved := s.st.public(), s.changed, s.deleted, s.moved
		s.mu.Unlock()
		if moved {
			return ErrMoved
		}
		if deleted {
			return fault.New(fault.NotFound, "session %s not found", sessionID)
		}
		if !fn(st) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Connect starts the session: with a linked device it logs in (CONNECTING,
// then CONNECTED), without one it starts pairing (PAIRING, with a QR code
// that rotates). It returns once the connection is open, not when it is
// logged in; it does nothing when the session is already connecting,
// pairing or connected.
func (m *Manager) Connect(ctx context.Context, sessionID string) error {
	s, err := m.lockSession(ctx, sessionID)
	if err != nil {
		return err
	}
	defer s.opMu.Unlock()
	return m.connect(ctx, s, false)
}

// PairPhone links the session by phone code instead of QR: it connects the
// session for pairing when needed, waits for the first QR code, asks
// WhatsApp for a code for number and returns it ("ABCD-EFGH"). The user
// enters it on that phone; the session then becomes CONNECTED.
func (m *Manager) PairPhone(ctx context.Context, sessionID, number string) (string, error) {
	number, err := ParsePhone("number", number)
	if err != nil {
		return "", err
	}
	s, err := m.lockSession(ctx, sessionID)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	st, running := s.st, s.cli != nil
	s.mu.Unlock()
	switch {
	case !st.jid.IsEmpty():
		s.opMu.Unlock()
		return "", fault.New(fault.Conflict, "session %s is already linked to %s: log out first", s.id, st.jid.User)
	case !running || (st.status != StatusConnecting && st.status != StatusPairing):
		if err := m.connect(ctx, s, false); err != nil {
			s.opMu.Unlock()
			return "", err
		}
	}
	s.opMu.Unlock()

	wctx, cancel := context.WithTimeout(ctx, pairWait)
	defer cancel()
	st, cli, err := s.waitFor(wctx, func(st *sessionState) bool { return st.status != StatusConnecting })
	switch {
	case fault.From(err) != nil:
		return "", err
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fault.Wrap(err, fault.WhatsAppTimeout, "session %s: WhatsApp did not offer pairing in time", s.id)
	}
	if st.status != StatusPairing || cli == nil {
		return "", notPairing(s.id, st)
	}
	code, err := cli.PairPhone(ctx, number, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		return "", classify(s.id, "pair by phone code", err)
	}
	m.change(s, cli, func(s *session) bool {
		if s.st.status != StatusPairing {
			return false
		}
		s.st.pairingCode = code
		return true
	})
	return code, nil
}

func notPairing(id string, st sessionState) error {
	if st.status == StatusConnected {
		return fault.New(fault.Conflict, "session %s is already linked to %s", id, st.jid.User)
	}
	msg := fmt.Sprintf("session %s is not pairing (status: %s", id, st.status)
	if st.reason != "" {
		msg += ": " + st.reason
	}
	return fault.New(fault.NotConnected, "%s)", msg)
}

// Disconnect closes the session's connection (DISCONNECTED); the device
// stays linked and Connect logs in again. A session the manager is not
// running is left as it is.
func (m *Manager) Disconnect(sessionID string) error {
	m.mu.Lock()
	s := m.sessions[sessionID]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	m.stopClient(s, "disconnected on request")
	return nil
}

// Logout unlinks the session's device from the account (the phone no longer
// lists it) and deletes its keys: LOGGED_OUT. The session must be CONNECTED.
func (m *Manager) Logout(ctx context.Context, sessionID string) error {
	s, err := m.lockSession(ctx, sessionID)
	if err != nil {
		return err
	}
	defer s.opMu.Unlock()
	cli, err := s.connectedClient()
	if err != nil {
		return err
	}
	if err := unlink(ctx, cli); err != nil {
		return classify(s.id, "log out", err)
	}
	var stop context.CancelFunc
	var jid types.JID
	m.change(s, nil, func(s *session) bool {
		_, stop = s.detachLocked()
		jid = s.st.jid
		s.st.loggedOut("logged out on request")
		return true
	})
	cli.Disconnect()
	if stop != nil {
		stop()
	}
	if err := m.deleteKeys(context.WithoutCancel(ctx), jid); err != nil {
		s.log.Error("deleting the device keys of the logged-out session failed", "jid", jid.String(), "err", err)
	}
	return nil
}

// Delete forgets a session whose record the caller has deleted from the
// StatusStore; call it only after that. From the call on no reader loads
// the session again (load reads the store anew when a Delete overlapped its
// read), nothing is persisted or published about it, its watchers end and
// operations waiting for it find it NOT_FOUND. Delete then closes the
// connection, unlinks the device when the session is connected (otherwise
// the phone drops the device after its own inactivity timeout) and deletes
// the device's keys, even when ctx ends meanwhile: the record is gone, so
// nothing could do it later.
//
// The session is deleted whatever happens to its device: a failure to
// unlink it or to delete its keys is logged, not returned. The only error
// is errClosed, when the manager has been closed (the gateway is shutting
// down). A session the manager never loaded has neither client nor known
// device; every session with a device is loaded (Restore, Connect).
func (m *Manager) Delete(ctx context.Context, sessionID string) error {
	s, err := m.forget(sessionID, false)
	if s == nil {
		return err
	}
	defer m.wg.Done()
	defer s.opMu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if cli, err := s.connectedClient(); err == nil {
		if err := unlink(ctx, cli); err != nil {
			s.log.Warn("unlinking the device of the deleted session failed: its keys are deleted here only", "err", err)
		}
	}
	s.mu.Lock()
	cli, stop := s.detachLocked()
	jid := s.st.jid
	s.mu.Unlock()
	if cli != nil {
		cli.Disconnect()
	}
	if stop != nil {
		stop()
	}
	if jid.IsEmpty() {
		return nil
	}
	if err := m.deleteKeys(ctx, jid); err != nil {
		s.log.Error("deleting the device keys of the deleted session failed", "jid", jid.String(), "err", err)
	}
	return nil
}

// forget removes a session from the manager for Delete (moved false) or
// Release (moved true): from then on no reader loads it again (load reads
// the store anew when it overlapped this), nothing is persisted or
// published about it, and its watchers end. It returns the session with
// its opMu held (an operation under way ends first; it changes nothing any
// more) and counted in m.wg (Close cancels the clients' context only after
// its client is closed): the caller closes it, then calls m.wg.Done and
// unlocks. nil when the manager did not hold it; errClosed once closed.
func (m *Manager) forget(sessionID string, moved bool) (*session, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errClosed
	}
	s := m.sessions[sessionID]
	// A load of a deleted session that overlapped this must read again
	// (its record is gone). A release of a session not held has nothing
	// to protect: a stale copy a load inserts is read anew by the next
	// Adopt (dropIdleLocked). So a release does not make every load under
	// way read again.
	if s != nil || !moved {
		m.deletions++
	}
	delete(m.sessions, sessionID)
	if s != nil {
		m.wg.Add(1)
	}
	m.mu.Unlock()
	if s == nil {
		return nil, nil
	}
	s.emitMu.Lock()
	s.mu.Lock()
	s.deleted, s.moved = true, moved
	s.notifyLocked()
	s.mu.Unlock()
	s.emitMu.Unlock()
	s.opMu.Lock()
	return s, nil
}

// Close disconnects every session (DISCONNECTED, persisted) and returns when
// every goroutine the manager started has ended. The devices stay linked:
// a new manager's Restore logs them in again.
func (m *Manager) Close() {
	m.mu.Lock()
	ss := make([]*session, 0, len(m.sessions))
	if !m.closed {
		m.closed = true
		m.closing.Store(true)
		for _, s := range m.sessions {
			ss = append(ss, s)
		}
	}
	m.mu.Unlock()
	forEach(len(ss), func(i int) {
		ss[i].opMu.Lock()
		defer ss[i].opMu.Unlock()
		m.stopClient(ss[i], shutdownReason)
	})
	m.wg.Wait() // QR watchers, and closeLater's timers: at most closeGrace
	m.cancel()
}
