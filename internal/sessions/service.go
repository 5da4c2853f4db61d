package sessions

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/recent"
)

// Bounds of the session owner cache.
const (
	// ownerTTL is how long a session's owner is reused. Deletion in this
	// process is immediate (Delete and Forget drop the entry); the TTL
	// bounds what a process cannot be told, as the token cache's does.
	ownerTTL = 5 * time.Second
	// ownerMax bounds the entries: past it nothing more is cached until
	// entries expire.
	ownerMax = 10_000
)

// Tokens issues a new session's first token and ends a deleted session's
// tokens, here and on the other processes (auth.Service).
type Tokens interface {
	IssueSessionToken(ctx context.Context, db *ent.Client, sessionID, ownerID string) (string, error)
	EndSession(ctx context.Context, sessionID string, tokenIDs []string)
}

// Unlinker stops a deleted session where it runs, unlinks its device and
// deletes its keys (the manager, or the cluster's router).
type Unlinker interface {
	Delete(ctx context.Context, sessionID string) error
}

// Claimer makes this process a new session's first holder in a cluster
// (cluster.Node); false when another process holds it.
type Claimer interface {
	Claim(ctx context.Context, sessionID string) (bool, error)
}

// Ender ends the live subscriptions of a deleted session (events.Bus).
type Ender interface {
	EndSession(sessionID string)
}

// ServiceOptions are the dependencies of a Service. DB, Tokens, Unlinker,
// Now and NewID are required.
type ServiceOptions struct {
	DB       *ent.Client
	Tokens   Tokens
	Unlinker Unlinker
	Leases   Claimer // nil: one process (SQLite)
	Ended    Ender   // nil: no subscriptions to end
	Now      func() time.Time
	NewID    func() string
	// PerUser is how many sessions a user who is not an admin may have;
	// 0: no bound.
	PerUser int
	Logger  *slog.Logger
	// Media deletes a deleted session's kept media (mediakeep.Keeper);
	// nil: none is kept.
	Media MediaFiles
}

// MediaFiles are the kept media files of the sessions' messages.
type MediaFiles interface {
	// SessionFiles lists the files a session's messages refer to.
	SessionFiles(ctx context.Context, sessionID string) ([]string, error)
	// DropUnreferenced deletes those of sums no message refers to.
	DropUnreferenced(ctx context.Context, sums []string)
}

// Service is the home of the session record: who reaches a session, and
// its creation and deletion with their rules (names, the quota, the first
// token, the first holder) and one failure policy.
type Service struct {
	db      *ent.Client
	tokens  Tokens
	unlink  Unlinker
	leases  Claimer
	ended   Ender
	now     func() time.Time
	newID   func() string
	perUser int
	log     *slog.Logger
	media   MediaFiles // nil: none kept
	// owners remembers the owner of recently reached sessions, so that
	// "may this caller see session X" does not read the session's row on
	// every request (it was a fifth of a small REST request's cost). A
	// session's owner never changes (owner_id is immutable); only its
	// deletion ends an entry.
	owners *recent.Cache[string, string]
}

// NewService returns the session service over opts.
func NewService(opts ServiceOptions) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{
		db: opts.DB, tokens: opts.Tokens, unlink: opts.Unlinker, leases: opts.Leases, ended: opts.Ended,
		now: opts.Now, newID: opts.NewID, perUser: opts.PerUser, log: opts.Logger, media: opts.Media,
		owners: recent.New[string, string](ownerTTL, ownerMax),
	}
}

// NotFound is the answer about a session that does not exist or that the
// caller does not reach: the same, so a caller learns nothing of others'.
func NotFound(id string) error {
	return fault.New(fault.NotFound, "session %s not found", id)
}

// Reach checks that p reaches session id, the owner read from the cache
// when it is there.
func (s *Service) Reach(ctx context.Context, p *auth.Principal, id string) error {
	// The wall clock, not s.now: the cache's freshness is the process's
	// own business, whatever clock the records are stamped with.
	now := time.Now()
	owner, ok := s.owners.Get(id, now)
	if !ok {
		gen := s.owners.Generation()
		rec, err := s.db.Session.Get(ctx, id)
		if ent.IsNotFound(err) {
			return NotFound(id)
		}
		if err != nil {
			return fmt.Errorf("get session %s: %w", id, err)
		}
		owner = rec.OwnerID
		s.owners.Put(id, owner, gen, now)
	}
	if !p.Reaches(id, owner) {
		return NotFound(id)
	}
	return nil
}

// Get returns the record of session id when p reaches it.
func (s *Service) Get(ctx context.Context, p *auth.Principal, id string) (*ent.Session, error) {
	rec, err := s.db.Session.Get(ctx, id)
	if ent.IsNotFound(err) || (err == nil && !p.Reaches(rec.ID, rec.OwnerID)) {
		return nil, NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, err)
	}
	return rec, nil
}

// Create makes a session of p's user named name (trimmed and checked; ""
// for a generated one) with its first token, within the user's quota (an
// admin runs the gateway: no quota of its own), and makes this process its
// first holder in a cluster. A failed claim is logged by the cluster and
// left to its balancer: the session exists either way.
func (s *Service) Create(ctx context.Context, p *auth.Principal, name string) (*ent.Session, string, error) {
	var (
		rec *ent.Session
		tok string
	)
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		limit := s.perUser
		if p.Admin {
			limit = 0
		}
		settled, err := settleName(ctx, tx, p.UserID, name, limit)
		if err != nil {
			return err
		}
		rec, err = tx.Session.Create().SetID(s.newID()).SetName(settled).SetOwnerID(p.UserID).SetCreatedAt(s.now()).Save(ctx)
		if err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		tok, err = s.tokens.IssueSessionToken(ctx, tx.Client(), rec.ID, rec.OwnerID)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	if s.leases != nil {
		_, _ = s.leases.Claim(ctx, rec.ID)
	}
	return rec, tok, nil
}

// Delete deletes session rec. The record goes first (tokens, webhooks and
// messages with it: their foreign keys cascade), so that no status read
// can load the session back. Once it is gone the delete has happened: the
// rest is finished (the caches forget it, its tokens and subscriptions
// end, the manager closes its connection, unlinks the device and deletes
// its keys), what fails there is logged, and Delete answers success, so
// that a client never sees a failure for a session that is gone (and then
// NOT_FOUND when it tries again).
func (s *Service) Delete(ctx context.Context, rec *ent.Session) error {
	tokenIDs, err := s.db.Session.QueryTokens(rec).IDs(ctx)
	if err != nil {
		return fmt.Errorf("list tokens of session %s: %w", rec.ID, err)
	}
	// The files its messages refer to, read before the messages go with
	// the record: those no other session's message refers to go after it.
	var kept []string
	if s.media != nil {
		if kept, err = s.media.SessionFiles(ctx, rec.ID); err != nil {
			return err
		}
	}
	if err := s.db.Session.DeleteOne(rec).Exec(ctx); err != nil {
		return fmt.Errorf("delete session %s: %w", rec.ID, err)
	}
	// From here on the caller's going away must not leave the rest undone.
	ctx = context.WithoutCancel(ctx)
	if s.media != nil {
		s.media.DropUnreferenced(ctx, kept)
	}
	s.Forget(rec.ID)
	s.tokens.EndSession(ctx, rec.ID, tokenIDs)
	if err := s.unlink.Delete(ctx, rec.ID); err != nil {
		s.log.Warn("the session was deleted, but stopping it where it ran failed: its device may stay linked until it is removed on the phone",
			"session_id", rec.ID, "err", err)
	}
	return nil
}

// Forget forgets a session deleted a moment ago, here or by another
// process (its revocation notice): its owner is no longer cached and its
// subscriptions end (its log went with the record).
func (s *Service) Forget(id string) {
	s.owners.Forget(id)
	if s.ended != nil {
		s.ended.EndSession(id)
	}
}
