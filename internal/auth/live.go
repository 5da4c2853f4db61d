package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

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
	live, err := s.tokenLive(ctx, p.TokenID)
	if err != nil {
		cancel(err)
		return nil, err
	}
	if !live {
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
	s.rechecks.Drop(func(id string, _ struct{}) bool { return slices.Contains(tokenIDs, id) })
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

// Recheck checks again that the token of p, which authenticated a socket
// a while ago, is still valid: every operation on a socket is checked as
// an HTTP request is, with the same few seconds of reuse, so that a
// revocation no notice brought (another process's, its notification lost)
// still ends the socket. A token found revoked ends its connections here.
func (s *Service) Recheck(ctx context.Context, p *Principal) error {
	now := time.Now()
	if _, ok := s.rechecks.Get(p.TokenID, now); ok {
		return nil
	}
	gen := s.rechecks.Generation()
	live, err := s.tokenLive(ctx, p.TokenID)
	if err != nil {
		return err
	}
	if !live {
		s.Disconnect(p.TokenID)
		return errInvalid
	}
	s.rechecks.Put(p.TokenID, struct{}{}, gen, now)
	return nil
}

// RecheckAll forgets every cached token check and ends the connections of
// every bound token that is no longer valid: the listener calls it when it
// (re)connects, since the notices sent while it had no connection are lost.
func (s *Service) RecheckAll(ctx context.Context) error {
	s.cache.Drop(func(string, Principal) bool { return true })
	s.rechecks.Drop(func(string, struct{}) bool { return true })
	s.live.mu.Lock()
	ids := make([]string, 0, len(s.live.conns))
	for id := range s.live.conns {
		ids = append(ids, id)
	}
	s.live.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	valid, err := s.db.Token.Query().Where(token.IDIn(ids...), token.RevokedAtIsNil()).IDs(ctx)
	if err != nil {
		return fmt.Errorf("recheck tokens: %w", err)
	}
	var gone []string
	for _, id := range ids {
		if !slices.Contains(valid, id) {
			gone = append(gone, id)
		}
	}
	s.Disconnect(gone...)
	return nil
}

// tokenLive reports whether the token with id exists unrevoked.
func (s *Service) tokenLive(ctx context.Context, id string) (bool, error) {
	live, err := s.db.Token.Query().Where(token.ID(id), token.RevokedAtIsNil()).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("check token: %w", err)
	}
	return live, nil
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
