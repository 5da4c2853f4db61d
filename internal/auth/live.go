package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wagraph/wagraph/ent/token"
)

// ErrTokenGone ends what a revoked (or deleted) token had open.
var ErrTokenGone = errors.New("token revoked")

// live tracks long-lived connections per token, so a revocation reaches the
// websockets that authenticated with it at once rather than at their next
// request.
type live struct {
	mu    sync.Mutex
	conns map[string]map[*context.CancelCauseFunc]struct{}
}

// Bind returns a context that ends when the token of p is revoked or
// deleted. The binding is forgotten when ctx ends. A token revoked between
// its authentication and Bind is caught by the check after binding.
func (s *Service) Bind(ctx context.Context, p *Principal) (context.Context, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := &cancel
	s.live.mu.Lock()
	if s.live.conns == nil {
		s.live.conns = map[string]map[*context.CancelCauseFunc]struct{}{}
	}
	if s.live.conns[p.TokenID] == nil {
		s.live.conns[p.TokenID] = map[*context.CancelCauseFunc]struct{}{}
	}
	s.live.conns[p.TokenID][key] = struct{}{}
	s.live.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.live.mu.Lock()
		defer s.live.mu.Unlock()
		delete(s.live.conns[p.TokenID], key)
		if len(s.live.conns[p.TokenID]) == 0 {
			delete(s.live.conns, p.TokenID)
		}
	})
	n, err := s.db.Token.Query().Where(token.ID(p.TokenID), token.RevokedAtIsNil()).Count(ctx)
	if err != nil {
		cancel(err)
		return nil, fmt.Errorf("check token: %w", err)
	}
	if n == 0 {
		cancel(ErrTokenGone)
		return nil, errInvalid
	}
	return ctx, nil
}

// Disconnect ends every connection bound to the given tokens and forgets
// their cached checks: every revocation (revokeToken, deleteSession) calls
// it, so a revoked token is refused from then on.
func (s *Service) Disconnect(tokenIDs ...string) {
	dropTokens(s.cache, tokenIDs...)
	s.live.mu.Lock()
	var cancels []context.CancelCauseFunc
	for _, id := range tokenIDs {
		for c := range s.live.conns[id] {
			cancels = append(cancels, *c)
		}
	}
	s.live.mu.Unlock()
	for _, c := range cancels {
		c(ErrTokenGone)
	}
}

// bound reports how many connections are bound; tests use it to see that
// bindings are forgotten.
func (s *Service) bound() int {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	n := 0
	for _, m := range s.live.conns {
		n += len(m)
	}
	return n
}
