package auth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/ent/token"
	"github.com/wagraph/wagraph/ent/user"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/recent"
	"github.com/wagraph/wagraph/internal/revocation"
	"github.com/wagraph/wagraph/internal/storage"
)

// Service issues, checks and revokes tokens.
type Service struct {
	db       *ent.Client
	rand     io.Reader
	now      func() time.Time
	newID    func() string
	live     live
	cache    *recent.Cache[string, Principal] // hash → principal
	rechecks *recent.Cache[string, struct{}]  // token id → still valid
	announce Announcer
	// maxSessionTokens bounds a session's live tokens (0: none).
	maxSessionTokens int
}

// Options are what a Service needs besides its database.
type Options struct {
	// Announcer tells the other processes of a revocation; nil: this is
	// the only process.
	Announcer Announcer
	// MaxSessionTokens bounds the live tokens of one session
	// (--max-tokens-per-session); 0: no bound.
	MaxSessionTokens int
}

// Announcer tells the other processes on the database that tokens ended
// (revocation.Announcer); it logs what it could not send.
type Announcer interface {
	Announce(ctx context.Context, n revocation.Notice) error
}

// NewService returns a Service storing tokens in db. rand feeds token secrets,
// newID names new rows.
func NewService(db *ent.Client, rand io.Reader, now func() time.Time, newID func() string, opts Options) *Service {
	if opts.Announcer == nil {
		opts.Announcer = revocation.NewAnnouncer(nil, nil)
	}
	return &Service{db: db, rand: rand, now: now, newID: newID, cache: newTokenCache(),
		rechecks: recent.New[string, struct{}](tokenCacheTTL, tokenCacheMax), announce: opts.Announcer,
		maxSessionTokens: opts.MaxSessionTokens}
}

// Authenticate returns the principal of a raw token. A valid token's check
// is reused for a few seconds (tokenCacheTTL); revoking it here ends that at
// once.
func (s *Service) Authenticate(ctx context.Context, raw string) (*Principal, error) {
	if raw == "" {
		return nil, errMissing
	}
	hash := Hash(raw)
	// The wall clock, not s.now: the cache's freshness is the process's
	// own business, whatever clock the records are stamped with.
	now := time.Now()
	if p, ok := s.cache.Get(string(hash), now); ok {
		return &p, nil
	}
	gen := s.cache.Generation()
	t, err := s.db.Token.Query().
		Where(token.Hash(hash), token.RevokedAtIsNil()).
		WithUser().
		Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errInvalid
	}
	if err != nil {
		return nil, fmt.Errorf("look up token: %w", err)
	}
	p := &Principal{TokenID: t.ID, UserID: t.UserID, UserName: t.Edges.User.Name, Admin: t.Edges.User.Admin}
	if t.Kind == token.KindSession {
		p.SessionID = *t.SessionID
		p.Admin = false
	}
	s.cache.Put(string(hash), *p, gen, now)
	return p, nil
}

// Bootstrap makes sure there is a way in. With adminToken set, an admin user
// named "admin" is ensured whose user token is adminToken, and the token an
// earlier, different value of the setting brought in is revoked. Otherwise,
// when the database has no user at all, an admin is created and its new
// token is written to announce once; a database with users prints nothing.
func (s *Service) Bootstrap(ctx context.Context, adminToken string, announce io.Writer, log *slog.Logger) error {
	if adminToken != "" {
		return s.ensureAdminToken(ctx, adminToken, log)
	}
	n, err := s.db.User.Query().Count(ctx)
	if err != nil {
		return fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return nil
	}
	u, tok, err := s.CreateUser(ctx, "admin", true)
	if err != nil {
		return err
	}
	fmt.Fprintf(announce, "\nwagraph: created admin user %s. Its token is shown this once; keep it safe:\n\n    %s\n\n", u.ID, tok)
	return nil
}

func (s *Service) ensureAdminToken(ctx context.Context, raw string, log *slog.Logger) error {
	var revoked []string
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		t, err := tx.Token.Query().Where(token.Hash(Hash(raw))).WithUser().Only(ctx)
		switch {
		case err == nil:
			if t.Kind != token.KindUser || !t.Edges.User.Admin {
				return fmt.Errorf("--admin-token is already in use by a token that is not an admin user token")
			}
			// The operator revoked it yet still configures it: the
			// setting wins. A token from before tokens were marked is
			// marked now, so that a later change of the setting ends it.
			if t.RevokedAt != nil || !t.FromSetting {
				if err := tx.Token.UpdateOne(t).ClearRevokedAt().SetFromSetting(true).Exec(ctx); err != nil {
					return fmt.Errorf("reinstate admin token: %w", err)
				}
			}
		case ent.IsNotFound(err):
			admin, err := tx.User.Query().Where(user.Name("admin"), user.Admin(true)).Order(user.ByCreatedAt()).First(ctx)
			if ent.IsNotFound(err) {
				admin, err = tx.User.Create().SetID(s.newID()).SetName("admin").SetAdmin(true).SetCreatedAt(s.now()).Save(ctx)
			}
			if err != nil {
				return fmt.Errorf("ensure admin user: %w", err)
			}
			if err := tx.Token.Create().SetID(s.newID()).SetHash(Hash(raw)).SetKind(token.KindUser).
				SetUserID(admin.ID).SetCreatedAt(s.now()).SetFromSetting(true).Exec(ctx); err != nil {
				return fmt.Errorf("store admin token: %w", err)
			}
		default:
			return fmt.Errorf("look up admin token: %w", err)
		}
		// Whatever an earlier value of the setting let in goes now.
		stale := tx.Token.Query().Where(token.FromSetting(true), token.RevokedAtIsNil(), token.HashNEQ(Hash(raw)))
		if revoked, err = stale.IDs(ctx); err != nil {
			return fmt.Errorf("find earlier admin tokens: %w", err)
		}
		if len(revoked) > 0 {
			if err := tx.Token.Update().Where(token.IDIn(revoked...)).SetRevokedAt(s.now()).Exec(ctx); err != nil {
				return fmt.Errorf("revoke earlier admin tokens: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(revoked) > 0 {
		log.Info("WAGRAPH_ADMIN_TOKEN changed: the admin token of its previous value is revoked", "revoked_tokens", len(revoked))
	}
	return nil
}

// CreateUser creates a user and its first user token.
func (s *Service) CreateUser(ctx context.Context, name string, admin bool) (*ent.User, string, error) {
	tx, err := s.db.Tx(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	u, err := tx.User.Create().SetID(s.newID()).SetName(name).SetAdmin(admin).SetCreatedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("create user: %w", err)
	}
	raw, err := s.issue(ctx, tx.Client(), UserPrefix, u.ID, "")
	if err != nil {
		return nil, "", err
	}
	if err := tx.Commit(); err != nil {
		return nil, "", fmt.Errorf("commit user: %w", err)
	}
	return u, raw, nil
}

// IssueSessionToken creates a token that reaches exactly one session. db may
// be a transaction's client, so the token is born with its session.
//
// A session holds at most maxSessionTokens live tokens: the count is
// checked with the session's row locked, so two issues cannot both take
// the last place.
func (s *Service) IssueSessionToken(ctx context.Context, db *ent.Client, sessionID, ownerID string) (string, error) {
	if db != nil { // the caller's transaction
		return s.issueSessionToken(ctx, db, sessionID, ownerID)
	}
	var raw string
	err := ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		var err error
		raw, err = s.issueSessionToken(ctx, tx.Client(), sessionID, ownerID)
		return err
	})
	return raw, err
}

func (s *Service) issueSessionToken(ctx context.Context, db *ent.Client, sessionID, ownerID string) (string, error) {
	if s.maxSessionTokens > 0 {
		if _, err := db.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx); err != nil {
			return "", fmt.Errorf("lock session %s: %w", sessionID, err)
		}
		n, err := db.Token.Query().Where(token.SessionID(sessionID), token.RevokedAtIsNil()).Count(ctx)
		if err != nil {
			return "", fmt.Errorf("count the tokens of session %s: %w", sessionID, err)
		}
		if n >= s.maxSessionTokens {
			return "", fault.New(fault.Conflict, "quota reached: session %s has %d live tokens, the most one may have (--max-tokens-per-session); revoke one first", sessionID, n)
		}
	}
	return s.issue(ctx, db, SessionPrefix, ownerID, sessionID)
}

func (s *Service) issue(ctx context.Context, db *ent.Client, prefix, userID, sessionID string) (string, error) {
	raw, err := newToken(s.rand, prefix)
	if err != nil {
		return "", err
	}
	c := db.Token.Create().SetID(s.newID()).SetHash(Hash(raw)).SetUserID(userID).SetCreatedAt(s.now())
	if sessionID != "" {
		c.SetKind(token.KindSession).SetSessionID(sessionID)
	} else {
		c.SetKind(token.KindUser)
	}
	if err := c.Exec(ctx); err != nil {
		return "", fmt.Errorf("store token: %w", err)
	}
	return raw, nil
}

// Revoke revokes the token raw on behalf of p. A token p may not manage is
// answered exactly as an unknown one. Revoking a revoked token succeeds.
func (s *Service) Revoke(ctx context.Context, p *Principal, raw string) error {
	notFound := fault.New(fault.NotFound, "token not found")
	t, err := s.db.Token.Query().Where(token.Hash(Hash(raw))).WithSession().Only(ctx)
	if ent.IsNotFound(err) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("look up token: %w", err)
	}
	var allowed bool
	switch {
	case p.IsSessionToken():
		allowed = t.ID == p.TokenID // a session token may only revoke itself
	case p.Admin:
		allowed = true
	default:
		allowed = t.UserID == p.UserID
	}
	if !allowed {
		return notFound
	}
	if t.RevokedAt != nil {
		return nil
	}
	if err := s.db.Token.UpdateOne(t).SetRevokedAt(s.now()).Exec(ctx); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	s.Disconnect(t.ID)
	// Committed: the revocation stands whether or not the others hear of
	// it now; one that does not is bounded by their rechecks (tokenCacheTTL)
	// and by the full recheck their listener makes when it reconnects.
	s.tellOthers(ctx, revocation.Notice{Tokens: []string{t.ID}})
	return nil
}

// announceTimeout bounds the notice of a revocation already committed.
const announceTimeout = 5 * time.Second

// tellOthers announces n even when the request that made the change has
// ended meanwhile: the change is committed, and the others must hear of it.
func (s *Service) tellOthers(ctx context.Context, n revocation.Notice) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), announceTimeout)
	defer cancel()
	_ = s.announce.Announce(ctx, n) // it logs a failure; the rechecks bound it
}

// EndSession ends what the tokens of a session deleted a moment ago hold
// open, here and, through the announcer, on every other process, which
// also forget the session itself.
func (s *Service) EndSession(ctx context.Context, sessionID string, tokenIDs []string) {
	s.Disconnect(tokenIDs...)
	s.tellOthers(ctx, revocation.Notice{Session: sessionID, Tokens: tokenIDs})
}
