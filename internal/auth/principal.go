package auth

import (
	"context"

	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/fault"
)

// Principal is who a valid token stands for.
type Principal struct {
	TokenID   string
	UserID    string
	UserName  string
	Admin     bool
	SessionID string // set for a session token: the one session it reaches
}

// IsSessionToken reports whether the principal is a session token.
func (p *Principal) IsSessionToken() bool { return p.SessionID != "" }

// Reaches reports whether the principal may see and act on the session with
// the given id and owner.
func (p *Principal) Reaches(sessionID, ownerID string) bool {
	if p.IsSessionToken() {
		return p.SessionID == sessionID
	}
	return p.Admin || p.UserID == ownerID
}

// RequireUserToken refuses session tokens, which may not create sessions,
// users or tokens.
func (p *Principal) RequireUserToken(what string) error {
	if p.IsSessionToken() {
		return fault.New(fault.Forbidden, "a session token cannot %s; use a user token", what)
	}
	return nil
}

// RequireAdmin refuses every principal but an admin's user token.
func (p *Principal) RequireAdmin(what string) error {
	if p.IsSessionToken() || !p.Admin {
		return fault.New(fault.Forbidden, "only an admin user token can %s", what)
	}
	return nil
}

type stateKey struct{}

// state is what the middleware learnt of the caller: a principal, or the
// reason there is none.
type state struct {
	principal *Principal
	err       error
}

// WithPrincipal returns ctx carrying p. Transports that authenticate
// themselves (the websocket's connection_init) use it. p's user is also
// the tenant of the heavy work done for the request (internal/fairpool):
// the media pools and the link previews share their slots between users,
// a session token's being its session's owner.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	ctx = context.WithValue(ctx, stateKey{}, state{principal: p})
	if p == nil { // a failed authentication's: Require says why later
		return ctx
	}
	return fairpool.WithTenant(ctx, p.UserID)
}

// withFailure returns ctx carrying the reason the caller has no principal.
func withFailure(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, stateKey{}, state{err: err})
}

// Require returns the caller's principal, or the classified reason why there
// is none (no token, a bad token, the rate limit).
func Require(ctx context.Context) (*Principal, error) {
	s, ok := ctx.Value(stateKey{}).(state)
	switch {
	case !ok:
		return nil, errMissing
	case s.err != nil:
		return nil, s.err
	default:
		return s.principal, nil
	}
}

var (
	errMissing = fault.New(fault.Unauthenticated, "missing token: send it in the Authorization header")
	errInvalid = fault.New(fault.Unauthenticated, "invalid or revoked token")
)
