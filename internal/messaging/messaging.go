// Package messaging is the domain of sends: it validates a send request,
// loads and prepares its media, sends it through the session manager now or
// stores it for the scheduler, and keeps the message store every sent and
// received message is recorded in (delete for everyone, quotes and media
// downloads read it).
package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp"
)

// Sender is the session manager's part this package uses.
type Sender interface {
	Send(ctx context.Context, sessionID string, out whatsapp.Outgoing) (whatsapp.Sent, error)
	Revoke(ctx context.Context, sessionID string, chat whatsapp.JID, messageID string) (whatsapp.Sent, error)
	Download(ctx context.Context, sessionID string, ref whatsapp.MediaRef) ([]byte, error)
	RequestMediaRetry(ctx context.Context, sessionID string, msg whatsapp.Message) error
}

// Publisher receives the events this package makes (messages.update of
// scheduled sends).
type Publisher interface {
	Publish(ctx context.Context, sessionID string, ev whatsapp.Event) error
}

// Options are the dependencies of a Service.
type Options struct {
	DB        *ent.Client
	Sender    Sender
	Loader    *media.Loader
	Preparer  *media.Preparer
	Geocoder  *geocode.Geocoder
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
	// ConcurrentWrites says the database takes writers at once
	// (PostgreSQL): Records then do not queue on each other (recordMu).
	ConcurrentWrites bool
	// MaxScheduled and MaxScheduledBytes bound a session's pending
	// scheduled sends and the bytes they keep (payload and media); 0: no
	// bound.
	MaxScheduled      int
	MaxScheduledBytes int64
}

// Service sends messages and keeps the message store.
type Service struct {
	maxScheduled      int
	maxScheduledBytes int64

	db     *ent.Client
	wa     Sender
	loader *media.Loader
	prep   *media.Preparer
	geo    *geocode.Geocoder
	pub    Publisher
	now    func() time.Time
	log    *slog.Logger
	obs    Observer        // nil: nobody is told
	wake   chan struct{}   // a new scheduled send: the scheduler looks again
	held   func() []string // Options.Held

	// recordMu lets one Record write at a time. Every session's events
	// pass through Record on the session's own goroutine: with a hundred
	// sessions, a hundred writers asked SQLite for its one write lock at
	// once, and a writer that finds it taken sleeps in the busy handler
	// (1, 2, 5 … 100 ms) however soon the lock is free, so the event
	// log's writer and the webhook dispatcher waited behind them. Queued
	// here, they take the lock in turn without sleeping. PostgreSQL
	// locks rows, not the database: there the queue would only slow
	// sessions down (Options.ConcurrentWrites).
	recordMu   sync.Mutex
	concurrent bool
}

// New returns a service; call Run to start its scheduler.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Service{
		db: opts.DB, wa: opts.Sender, loader: opts.Loader, prep: opts.Preparer, geo: opts.Geocoder,
		pub: opts.Publisher, now: opts.Now, log: opts.Logger, obs: opts.Observer, wake: make(chan struct{}, 1),
		concurrent: opts.ConcurrentWrites, held: opts.Held,
		maxScheduled: opts.MaxScheduled, maxScheduledBytes: opts.MaxScheduledBytes,
	}
}

// Result is the outcome of a send: sent now (Timestamp) or stored for later
// (ScheduledAt).
type Result struct {
	MessageID   string
	Timestamp   *time.Time
	ScheduledAt *time.Time
}

// Send validates req, prepares it and sends it now, or stores it when it has
// a delay.
func (s *Service) Send(ctx context.Context, sessionID string, req Request) (res Result, err error) {
	defer func() { s.observe(req.Type, res.ScheduledAt != nil, err) }()
	out, delay, err := s.prepare(ctx, sessionID, req)
	if err != nil {
		return Result{}, err
	}
	if delay > 0 {
		return s.schedule(ctx, sessionID, out, delay)
	}
	sent, err := s.wa.Send(ctx, sessionID, out)
	if err != nil {
		return Result{}, err
	}
	ts := sent.Timestamp.UTC().Truncate(time.Millisecond)
	return Result{MessageID: sent.ID, Timestamp: &ts}, nil
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
	if _, err := s.wa.Revoke(ctx, sessionID, chat, messageID); err != nil {
		return err
	}
	return s.setStatus(ctx, sessionID, messageID, entmessage.StatusRevoked)
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

// Record keeps what an event says about messages: a sent or received
// message (the first record of an id wins, except that a scheduled one
// becomes sent), and revokes. It is called before the event is
// acknowledged to WhatsApp, so an error here makes WhatsApp send it again.
func (s *Service) Record(ctx context.Context, sessionID string, ev whatsapp.Event) error {
	if !s.concurrent {
		s.recordMu.Lock()
		defer s.recordMu.Unlock()
	}
	if m := ev.Message; m != nil && ev.Kind == whatsapp.KindMediaUpdate {
		return s.replaceMedia(ctx, sessionID, m)
	}
	if m := ev.Message; m != nil {
		return s.recordMessage(ctx, sessionID, m)
	}
	if d, ok := ev.Data.(*payload.MessageStatus); ok && ev.Kind == whatsapp.KindMessagesUpdate && d.MessageID != "" &&
		(d.Status == "revoked" || d.Status == "edited") {
		return s.judge(ctx, sessionID, d)
	}
	return nil
}

// judge applies a revoke or an edit a contact or the account's other
// device sent, when WhatsApp's own clients would: from the message's chat,
// by its sender (or, a revoke in a group, by an admin). Anyone can put
// any message id in a revoke, and ids are seen by every group member. A
// refused one becomes revoke-refused or edit-refused, the message left
// as it was; d.Sender names who sent it either way. A message this store
// never saw is nothing to protect: the event stays as it came.
func (s *Service) judge(ctx context.Context, sessionID string, d *payload.MessageStatus) error {
	m, err := s.db.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(d.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up message %s: %w", d.ID, err)
	}
	revoke := d.Status == "revoked"
	bySender := m.Chat == d.Chat && ((m.FromMe && d.ByMe) || (!m.FromMe && !d.ByMe && d.Sender != "" && m.Sender == string(d.Sender)))
	byAdmin := revoke && m.Chat == d.Chat && d.ByAdmin && strings.HasSuffix(m.Chat, "@g.us")
	if !bySender && !byAdmin {
		what, status := "edit", "edit-refused"
		if revoke {
			what, status = "revoke", "revoke-refused"
		}
		d.Status = status
		d.Text, d.Caption = "", ""
		d.Error = payload.Text(refusal(what, m, d))
		return nil
	}
	if !revoke {
		return nil // the store keeps a message as first sent; the event carries the edit
	}
	return s.setStatus(ctx, sessionID, d.ID, entmessage.StatusRevoked)
}

// refusal says why a revoke or an edit was not applied.
func refusal(what string, m *ent.Message, d *payload.MessageStatus) string {
	switch {
	case m.Chat != d.Chat:
		return fmt.Sprintf("a %s sent in another chat than the message's: not applied", what)
	case what == "revoke":
		return "a revoke by someone other than the message's sender or a group admin: not applied"
	}
	return "an edit by someone other than the message's sender: not applied"
}

// ChatSeen reports whether the store holds a message of chat in the
// session other than messageID: the first message of a chat makes it known
// (chats.upsert), and the same message sent again by WhatsApp still does.
func (s *Service) ChatSeen(ctx context.Context, sessionID, chat, messageID string) (bool, error) {
	ok, err := s.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.Chat(chat), entmessage.MessageIDNEQ(messageID)).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("look up chat %s: %w", chat, err)
	}
	return ok, nil
}

// replaceMedia stores the new location of a message's media, which the
// phone uploaded again (messages.media-update).
func (s *Service) replaceMedia(ctx context.Context, sessionID string, m *whatsapp.Message) error {
	ref, err := encodeMediaRef(m.Media)
	if err != nil || ref == nil {
		return err
	}
	_, err = s.db.Message.Update().Where(entmessage.SessionID(sessionID), entmessage.MessageID(m.ID)).SetMedia(ref).Save(ctx)
	if err != nil {
		return fmt.Errorf("store the new media location of message %s: %w", m.ID, err)
	}
	return nil
}

func (s *Service) recordMessage(ctx context.Context, sessionID string, m *whatsapp.Message) error {
	status := entmessage.StatusReceived
	if m.FromMe {
		status = entmessage.StatusSent
	}
	if m.Type == "revoke" {
		return nil // the revoke itself is not a message of the chat; messages.update carries it
	}
	create := s.db.Message.Create().
		SetSessionID(sessionID).SetMessageID(m.ID).SetChat(m.Chat).SetSender(m.Sender).
		SetFromMe(m.FromMe).SetType(m.Type).SetText(m.Text).SetCaption(m.Caption).
		SetStatus(status).SetTimestamp(m.Timestamp.UTC())
	ref, err := encodeMediaRef(m.Media)
	if err != nil {
		return err
	}
	if ref != nil {
		create.SetMedia(ref)
	}
	conflict := []entsql.ConflictOption{entsql.ConflictColumns(entmessage.FieldSessionID, entmessage.FieldMessageID)}
	if m.FromMe {
		// A scheduled send that went out: the reserved record becomes sent,
		// with the media it was sent with. One statement, not an insert
		// then an update: this runs for every message sent.
		conflict = append(conflict,
			entsql.ResolveWith(func(u *entsql.UpdateSet) {
				u.SetExcluded(entmessage.FieldStatus)
				u.SetExcluded(entmessage.FieldTimestamp)
				if ref != nil {
					u.SetExcluded(entmessage.FieldMedia)
				}
			}),
			entsql.UpdateWhere(entsql.EQ(entmessage.FieldStatus, string(entmessage.StatusScheduled))))
	} else {
		conflict = append(conflict, entsql.ResolveWithIgnore())
	}
	err = create.OnConflict(conflict...).Exec(ctx)
	if m.FromMe && errors.Is(err, sql.ErrNoRows) {
		// The record exists and is not scheduled: the update's WHERE kept
		// it as it was, so the statement returned no row.
		err = nil
	}
	if err != nil {
		return fmt.Errorf("record message %s: %w", m.ID, err)
	}
	return nil
}

// Media downloads the attachment of a stored message from WhatsApp's media
// hosts and returns it decrypted, with its content type (the message's
// mimetype, else sniffed) and its file name (documents). A message this
// store does not know, or one without media, is NOT_FOUND.
func (s *Service) Media(ctx context.Context, sessionID, messageID string) (data []byte, mimetype, fileName string, err error) {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return nil, "", "", err
	}
	if len(m.Media) == 0 {
		return nil, "", "", fault.New(fault.NotFound, "message %s has no media", messageID)
	}
	var ref whatsapp.MediaRef
	if err := json.Unmarshal(m.Media, &ref); err != nil {
		return nil, "", "", fmt.Errorf("stored media of message %s: %w", messageID, err)
	}
	// A download holds the attachment whole, twice while it is decrypted:
	// one of the preparer's download slots bounds how many do at once.
	release, err := s.prep.DownloadSlot(ctx)
	if err != nil {
		return nil, "", "", err
	}
	data, err = s.wa.Download(ctx, sessionID, ref)
	release()
	if isNotFound(err) {
		return nil, "", "", s.askAgain(ctx, sessionID, m, ref)
	}
	if err != nil {
		return nil, "", "", err
	}
	mimetype = ref.Mimetype
	if mimetype == "" {
		mimetype = http.DetectContentType(data)
	}
	return data, mimetype, ref.FileName, nil
}

// askAgain asks the account's phone to upload the media of m again, which
// WhatsApp's media hosts deleted (they keep a blob for a few weeks), and
// returns the NOT_FOUND the caller gets meanwhile. The phone's answer comes
// as messages.media-update; on success Record stores the new location and
// the media route serves it again.
func (s *Service) askAgain(ctx context.Context, sessionID string, m *ent.Message, ref whatsapp.MediaRef) error {
	msg := whatsapp.Message{ID: m.MessageID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type, Timestamp: m.Timestamp, Media: &ref}
	if err := s.wa.RequestMediaRetry(ctx, sessionID, msg); err != nil {
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

func (s *Service) setStatus(ctx context.Context, sessionID, messageID string, st entmessage.Status) error {
	n, err := s.db.Message.Update().
		Where(entmessage.SessionID(sessionID), entmessage.MessageID(messageID)).
		SetStatus(st).Save(ctx)
	if err != nil {
		return fmt.Errorf("set status of message %s: %w", messageID, err)
	}
	if n == 0 {
		return fault.New(fault.NotFound, "message %s not found in session %s", messageID, sessionID)
	}
	return nil
}

func isNotFound(err error) bool {
	var f *fault.Error
	return errors.As(err, &f) && f.Code == fault.NotFound
}
