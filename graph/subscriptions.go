package graph

import (
	"context"
	"sync"

	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/fault"
)

// Bounds on open subscriptions: each holds a goroutine, a bus buffer and
// up to a replay page (events.replayBytes), so a token that could open
// them without end could hold the server's memory. A socket's bound keeps
// one connection from carrying them all; a token's, one client from
// spreading them over sockets and SSE streams.
const (
	MaxSubscriptionsPerSocket = 16
	MaxSubscriptionsPerToken  = 64
)

// subscriptionCounts counts the open subscriptions of each token in this
// process.
type subscriptionCounts struct {
	mu      sync.Mutex
	byToken map[string]int
}

// openSubscription admits a new subscription of p: it refuses one past the
// bounds, and binds the stream to p's token (a revocation ends it). release
// must be called when the stream ends.
func (r *Resolver) openSubscription(ctx context.Context, p *auth.Principal) (context.Context, func(), error) {
	sock := socketOf(ctx)
	if sock != nil && sock.subscriptions.Add(1) > MaxSubscriptionsPerSocket {
		sock.subscriptions.Add(-1)
		return nil, nil, fault.New(fault.RateLimited, "too many subscriptions on this connection: at most %d at once; complete one first", MaxSubscriptionsPerSocket)
	}
	c := &r.subscriptions
	c.mu.Lock()
	if c.byToken[p.TokenID] >= MaxSubscriptionsPerToken {
		c.mu.Unlock()
		if sock != nil {
			sock.subscriptions.Add(-1)
		}
		return nil, nil, fault.New(fault.RateLimited, "too many subscriptions for this token: at most %d at once over all its connections; complete one first", MaxSubscriptionsPerToken)
	}
	if c.byToken == nil {
		c.byToken = map[string]int{}
	}
	c.byToken[p.TokenID]++
	c.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			c.mu.Lock()
			if c.byToken[p.TokenID]--; c.byToken[p.TokenID] <= 0 {
				delete(c.byToken, p.TokenID)
			}
			c.mu.Unlock()
			if sock != nil {
				sock.subscriptions.Add(-1)
			}
		})
	}
	bound, err := r.Auth.Bind(ctx, p)
	if err != nil {
		release()
		return nil, nil, err
	}
	return bound, release, nil
}
