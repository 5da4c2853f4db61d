// Package messaging is the domain of sends: it validates a send request,
// loads and prepares its media, sends it through the session manager now or
// stores it for the scheduler, and keeps the message store every sent and
// received message is recorded in (delete for everyone, quotes and media
// downloads read it).
package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/whatsapp"
)

// Publisher receives the events this package makes (messages.update of
// scheduled sends).
type Publisher interface {
	Publish(ctx context.Context, sessionID string, ev whatsapp.Event) error
}

// Loader reads a send's source (a URL or base64 data) into bytes
// (media.Loader); field names the source in errors.
type Loader interface {
	Load(ctx context.Context, field, source string) ([]byte, error)
}

// Preparer makes loaded media what WhatsApp's apps show (media.Preparer),
// and bounds the downloads running at once.
type Preparer interface {
	Image(ctx context.Context, data []byte, fileName string) (media.File, error)
	Video(ctx context.Context, data []byte, fileName string) (media.File, error)
	Document(ctx context.Context, data []byte, fileName string) (media.File, error)
	DocumentFile(ctx context.Context, head []byte, size int64, fileName string) (media.File, error)
	Audio(ctx context.Context, data []byte, voiceNote bool) (media.File, error)
	Sticker(ctx context.Context, data []byte) (media.File, error)
	DownloadSlot(ctx context.Context) (release func(), err error)
}

// Geocoder finds the coordinates of a location's address
// (geocode.Geocoder).
type Geocoder interface {
	Lookup(ctx context.Context, address string) (geocode.Place, error)
}

// Options are the dependencies of a Service.
type Options struct {
	DB       *ent.Client
	Sender   whatsapp.Runner // runs the sends where their session runs
	Loader   Loader
	Preparer Preparer
	Geocoder Geocoder
	// Previewer makes texts' link previews; nil: texts go without.
	Previewer Previewer
	// Invites makes the texts of group invitations (SendInvite).
	Invites   InviteTexts
	Publisher Publisher
	// Now is the scheduler's clock (default time.Now). The app keeps the
	// wall clock even when tests pin its own: due times must pass as time
	// does, and a scheduler reading a pinned clock would shift it under
	// the requests a test is checking.
	Now    func() time.Time
	Logger *slog.Logger
	// Observer, when set, is told how each send ended.
	Observer Observer
	// Held, when set, lists the sessions whose scheduled sends this
	// process makes: in a cluster, those it runs (each process makes its
	// own sessions' sends, so none is made twice). nil: every session.
	Held func() []string
	// Store is the message store the service records its sends in and
	// reads messages from; nil: one of its own over DB (NewStore).
	Store *Store
	// ConcurrentWrites is NewStore's, for the store of its own.
	ConcurrentWrites bool
	// MaxScheduled and MaxScheduledBytes bound a session's pending
	// scheduled sends and the bytes they keep (payload and media); 0: no
	// bound.
	MaxScheduled      int
	MaxScheduledBytes int64
	// SharedKeys says other processes make sends with the same
	// idempotency keys (a cluster on PostgreSQL): a key another process
	// holds is waited out rather than taken for dead.
	SharedKeys bool
	// NodeID names this process (--node-id) in the keys it holds, so a
	// restarted process takes over the keys its earlier run left pending.
	NodeID string
	// Settings reads the sessions' settings: their send rate and jitter
	// (pace.go) and whether texts are typed first. nil: every send goes at
	// once, untyped.
	Settings Settings
	// Automations, when set, is the queue the sink hands inbound events
	// to, which Run acts on as the sessions' settings say
	// (automations.go).
	Automations *Automations
	// Nodes, with SharedKeys, tells whether the process holding a pending
	// key is still in the cluster: a key of a process gone (killed, its
	// row expired within the lease TTL) is taken over then rather than
	// after keyLease. nil: every holder is waited out for keyLease.
	Nodes Liveness
	// Limits tells when the limit WhatsApp refused a scheduled send for
	// ends (the session's stored limits): the send waits until then. nil:
	// it waits as for a disconnected session.
	Limits LimitReader
	// Keeper, when set, keeps the media of the sends and serves the kept
	// media of the messages (internal/mediakeep). nil: media is
	// downloaded on demand only.
	Keeper MediaKeeper
}

// LimitReader reads what WhatsApp said of a session's limits.
type LimitReader interface {
	LoadLimits(ctx context.Context, sessionID string) (whatsapp.Limits, error)
}

// Liveness reports whether the process named node is in the cluster now.
type Liveness interface {
	Live(ctx context.Context, node string) (bool, error)
}

// Service sends messages; what they become is recorded in its Store.
type Service struct {
	maxScheduled      int
	maxScheduledBytes int64

	db          *ent.Client
	wa          whatsapp.Runner
	loader      Loader
	prep        Preparer
	geo         Geocoder
	previews    Previewer
	invites     InviteTexts
	pub         Publisher
	now         func() time.Time
	log         *slog.Logger
	obs         Observer        // nil: nobody is told
	wake        chan struct{}   // a new scheduled send: the scheduler looks again
	held        func() []string // Options.Held
	store       *Store
	settings    Settings     // nil: no session has settings
	automations *Automations // nil: none

	// The sends with an idempotency key (sendkey.go): this process's
	// name in the keys it holds, the keys whose send runs here now, and
	// whether other processes make sends with the same keys (a cluster).
	instance   string
	inflight   sync.Map
	sharedKeys bool
	nodes      Liveness  // nil: a holder is waited out for keyLease
	pruned     time.Time // when the scheduler last dropped expired keys
	limits     LimitReader
	keeper     MediaKeeper // nil: none kept
}

// New returns a service; call Run to start its scheduler.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Store == nil {
		opts.Store = NewStore(opts.DB, opts.ConcurrentWrites)
	}
	return &Service{
		db: opts.DB, wa: opts.Sender, loader: opts.Loader, prep: opts.Preparer, geo: opts.Geocoder, previews: opts.Previewer, invites: opts.Invites,
		pub: opts.Publisher, now: opts.Now, log: opts.Logger, obs: opts.Observer, wake: make(chan struct{}, 1),
		store: opts.Store, held: opts.Held, settings: opts.Settings, automations: opts.Automations, instance: newInstance(opts.NodeID), sharedKeys: opts.SharedKeys, nodes: opts.Nodes,
		maxScheduled: opts.MaxScheduled, maxScheduledBytes: opts.MaxScheduledBytes, limits: opts.Limits,
		keeper: opts.Keeper,
	}
}

// Result is the outcome of a send: sent now (Timestamp) or stored for later
// (ScheduledAt).
type Result struct {
	MessageID   string
	Timestamp   *time.Time
	ScheduledAt *time.Time
	// Recipient is who WhatsApp addressed, for a send made now (and its
	// replay from an idempotency key); nil for a scheduled one.
	Recipient *whatsapp.Identity
}

// Send validates req, prepares it and sends it now, or stores it when it has
// a delay.
func (s *Service) Send(ctx context.Context, sessionID string, req Request) (res Result, err error) {
	defer func() { s.observe(req.Type, res.ScheduledAt != nil, err) }()
	if req.IdempotencyKey != "" {
		return s.sendOnce(ctx, sessionID, req)
	}
	return s.send(ctx, sessionID, req, "")
}

// send makes req with message id id (empty: a new one).
func (s *Service) send(ctx context.Context, sessionID string, req Request, id string) (Result, error) {
	out, delay, err := s.prepare(ctx, sessionID, req)
	defer closeHeld(out.Media) // a forward's media, once it is sent or stored
	var refused notConnected
	if errors.As(err, &refused) {
		s.sendFailed(ctx, sessionID, out, id, refused.error)
		return Result{}, refused.error
	}
	if err != nil {
		return Result{}, err
	}
	if id != "" {
		out.ID = id
	}
	if delay > 0 {
		return s.schedule(ctx, sessionID, out, delay)
	}
	set, err := s.settingsOf(ctx, sessionID)
	if err != nil {
		return Result{}, err
	}
	if r := set.SendRate; r != nil {
		res, queued, err := s.pace(ctx, sessionID, out, r.Interval(), set.SendJitter)
		if err != nil || queued {
			return res, err
		}
	}
	if err := s.typeFirst(ctx, sessionID, out); err != nil {
		return Result{}, err
	}
	sent, err := whatsapp.OpSend().Do(ctx, s.wa, sessionID, out)
	if err != nil {
		return Result{}, err
	}
	s.keepSent(ctx, sessionID, sent.ID, out)
	ts := sent.Timestamp.UTC().Truncate(time.Millisecond)
	return Result{MessageID: sent.ID, Timestamp: &ts, Recipient: &sent.Recipient}, nil
}

// sendFailed publishes the messages.send (failed) of out, refused with
// cause before it reached the session (which publishes its own failures):
// under id, or a new one.
func (s *Service) sendFailed(ctx context.Context, sessionID string, out whatsapp.Outgoing, id string, cause error) {
	if s.pub == nil {
		return
	}
	out.ID = id
	if out.ID == "" {
		out.ID = whatsapp.NewMessageID()
	}
	if err := s.pub.Publish(context.WithoutCancel(ctx), sessionID, whatsapp.SendFailed(out, cause)); err != nil {
		s.log.WarnContext(ctx, "a refused send's event was not stored", "session_id", sessionID, "message_id", out.ID, "err", err)
	}
}

// Delete revokes a message for everyone. The chat comes from the store; a
// scheduled message not sent yet is cancelled instead.
func (s *Service) Delete(ctx context.Context, sessionID, messageID string) error {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return err
	}
	switch {
	case m.Status == entmessage.StatusScheduled:
		return s.cancel(ctx, sessionID, messageID)
	case m.Status == entmessage.StatusRevoked:
		return nil
	case !m.FromMe:
		return fault.New(fault.Conflict, "message %s was received, not sent by this session: only its own messages can be deleted for everyone", messageID)
	}
	chat, err := whatsapp.ParseJID(m.Chat)
	if err != nil {
		return fmt.Errorf("stored chat of message %s: %w", messageID, err)
	}
	if _, err := whatsapp.OpRevoke().Do(ctx, s.wa, sessionID, whatsapp.MessageRef{Chat: chat, MessageID: messageID}); err != nil {
		return err
	}
	return s.store.setStatus(ctx, sessionID, messageID, entmessage.StatusRevoked)
}

// Get returns a stored message, or NOT_FOUND.
func (s *Service) Get(ctx context.Context, sessionID, messageID string) (*ent.Message, error) {
	m, err := s.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.MessageID(messageID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fault.New(fault.NotFound, "message %s not found in session %s", messageID, sessionID)
	}
	if err != nil {
		return nil, fmt.Errorf("get message %s: %w", messageID, err)
	}
	return m, nil
}

// MediaKeeper keeps media in the media store (mediakeep.Keeper): the
// media route reads a kept file from it, and a send's uploaded bytes are
// kept through it.
type MediaKeeper interface {
	Open(ctx context.Context, sum string) (mediastore.Object, mediastore.Info, error)
	KeepSent(ctx context.Context, sessionID, messageID, typ string, size int64, viewOnce bool, body io.Reader) error
}

// MediaBody is a message's decrypted media: Body reads its Size bytes
// (seekable: Range requests) from the kept file or a temporary one, never
// whole in memory; close it once read.
type MediaBody struct {
	Body     io.ReadSeekCloser
	Size     int64
	Mimetype string // the message's, else sniffed
	FileName string // documents
	// SHA256 is the kept file's name (hex), ModTime when it was kept; ""
	// for media downloaded on demand.
	SHA256  string
	ModTime time.Time
}

// Media returns the attachment of a stored message: the kept file when
// there is one (MediaKeeper), else downloaded from WhatsApp's media hosts
// and decrypted into a temporary file. A message this store does not
// know, or one without media, is NOT_FOUND; so is a view-once message's
// media once it was viewed (viewonce.go).
func (s *Service) Media(ctx context.Context, sessionID, messageID string) (out MediaBody, err error) {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return out, err
	}
	ref, err := mediaRefOf(m)
	if err != nil {
		return out, err
	}
	if m.ViewOnce {
		var giveBack func()
		if giveBack, err = s.takeView(ctx, m); err != nil {
			return out, err
		}
		defer func() {
			if err != nil { // the function's result: only a successful download is the view
				giveBack()
			}
		}()
	}
	out = MediaBody{Mimetype: ref.Mimetype, FileName: ref.FileName}
	if out.Body, out.Size, out.SHA256, out.ModTime, err = s.kept(ctx, m); err != nil {
		return MediaBody{}, err
	}
	if out.Body == nil {
		// A download costs a connection, disk and the CPU of its checks and
		// decryption: one of the preparer's download slots bounds how many run
		// at once. The file is read without it (a slow client holds no slot).
		release, err := s.prep.DownloadSlot(ctx)
		if err != nil {
			return MediaBody{}, err
		}
		file, err := s.download(ctx, sessionID, m, ref, 0)
		release()
		if err != nil {
			return MediaBody{}, err
		}
		out.Body, out.Size = struct {
			io.ReadSeeker
			io.Closer
		}{io.NewSectionReader(file, 0, file.Size()), file}, file.Size()
	}
	if out.Mimetype == "" {
		head := make([]byte, min(out.Size, 512)) // what DetectContentType reads
		_, err := io.ReadFull(out.Body, head)
		if err == nil {
			_, err = out.Body.Seek(0, io.SeekStart)
		}
		if err != nil {
			out.Body.Close()
			return MediaBody{}, fmt.Errorf("read the media of message %s: %w", messageID, err)
		}
		out.Mimetype = http.DetectContentType(head)
	}
	return out, nil
}

// kept opens the kept file of m; a nil body when there is none (not kept,
// or gone since: pruned, deleted with another session).
func (s *Service) kept(ctx context.Context, m *ent.Message) (io.ReadSeekCloser, int64, string, time.Time, error) {
	if s.keeper == nil || m.MediaSha256 == nil {
		return nil, 0, "", time.Time{}, nil
	}
	obj, info, err := s.keeper.Open(ctx, *m.MediaSha256)
	if isNotFound(err) {
		s.log.WarnContext(ctx, "kept media is gone; downloaded on demand", "session_id", m.SessionID, "message_id", m.MessageID, "sha256", *m.MediaSha256)
		return nil, 0, "", time.Time{}, nil
	}
	if err != nil {
		return nil, 0, "", time.Time{}, fmt.Errorf("open the kept media of message %s: %w", m.MessageID, err)
	}
	return obj, info.Size, info.SHA256, info.ModTime, nil
}

// keepSent keeps the media of out, sent now as message id, from the bytes
// the session uploaded. A failure is logged: the message was sent, and its
// media stays on WhatsApp's servers for the keeper or the route.
func (s *Service) keepSent(ctx context.Context, sessionID, id string, out whatsapp.Outgoing) {
	md := out.Media
	if s.keeper == nil || md == nil {
		return
	}
	var body io.Reader
	var size int64
	switch {
	case md.Body != nil:
		body, size = io.NewSectionReader(md.Body, 0, md.Body.Size()), md.Body.Size()
	case len(md.Data) > 0:
		body, size = bytes.NewReader(md.Data), int64(len(md.Data))
	default:
		return
	}
	typ := out.Type
	if out.VoiceNote {
		typ = "voice"
	}
	if err := s.keeper.KeepSent(context.WithoutCancel(ctx), sessionID, id, typ, size, out.ViewOnce, body); err != nil {
		s.log.WarnContext(ctx, "a sent message's media was not kept", "session_id", sessionID, "message_id", id, "err", err)
	}
}

// mediaRefOf is the stored media reference of m; NOT_FOUND when it has
// none.
func mediaRefOf(m *ent.Message) (whatsapp.MediaRef, error) {
	var ref whatsapp.MediaRef
	if len(m.Media) == 0 {
		return ref, fault.New(fault.NotFound, "message %s has no media", m.MessageID)
	}
	if err := json.Unmarshal(m.Media, &ref); err != nil {
		return ref, fmt.Errorf("stored media of message %s: %w", m.MessageID, err)
	}
	return ref, nil
}

// download fetches the attachment of stored message m into a file, at
// most max bytes of it when max is not 0 (whatsapp.DownloadFile). A blob
// WhatsApp's media hosts deleted is asked for again (askAgain), NOT_FOUND
// meanwhile.
func (s *Service) download(ctx context.Context, sessionID string, m *ent.Message, ref whatsapp.MediaRef, max int64) (*whatsapp.MediaFile, error) {
	file, err := whatsapp.DownloadFile(ctx, s.wa, sessionID, ref, max)
	if isNotFound(err) {
		return nil, s.askAgain(ctx, sessionID, m, ref)
	}
	return file, err
}

// askAgain asks the account's phone to upload the media of m again, which
// WhatsApp's media hosts deleted (they keep a blob for a few weeks), and
// returns the NOT_FOUND the caller gets meanwhile. The phone's answer comes
// as messages.media-update; on success Record stores the new location and
// the media route serves it again.
func (s *Service) askAgain(ctx context.Context, sessionID string, m *ent.Message, ref whatsapp.MediaRef) error {
	msg := whatsapp.Message{ID: m.MessageID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type, Timestamp: m.Timestamp, Media: &ref}
	if _, err := whatsapp.OpRequestMediaRetry().Do(ctx, s.wa, sessionID, msg); err != nil {
		s.log.WarnContext(ctx, "could not ask the phone for expired media again", "session_id", sessionID, "message_id", m.MessageID, "err", err)
		return fault.New(fault.NotFound, "media of message %s is no longer on WhatsApp's servers", m.MessageID)
	}
	return fault.New(fault.NotFound, "media of message %s is no longer on WhatsApp's servers: the phone was asked to upload it again; "+
		"a messages.media-update event says when this route serves it", m.MessageID)
}

// encodeMediaRef is the stored form of a message's media reference.
func encodeMediaRef(ref *whatsapp.MediaRef) ([]byte, error) {
	if ref == nil {
		return nil, nil
	}
	b, err := json.Marshal(ref)
	if err != nil {
		return nil, fmt.Errorf("encode media reference: %w", err)
	}
	return b, nil
}

func isNotFound(err error) bool {
	var f *fault.Error
	return errors.As(err, &f) && f.Code == fault.NotFound
}
