package auth

import (
	"slices"
	"time"

	"github.com/wagraph/wagraph/internal/recent"
)

// Bounds of the token cache: the principals of recently checked tokens, by
// hash, so that a request does not query the database for its token each
// time (the lookup was about a tenth of a small request's cost).
const (
	// tokenCacheTTL is how long a token's check is reused. Revocation in
	// this process is immediate (Disconnect drops the entry); the TTL
	// bounds what a process cannot be told (a revocation made by another
	// process on a shared database).
	tokenCacheTTL = 5 * time.Second
	// tokenCacheMax bounds the entries: only valid tokens are cached, so
	// it is reached only by that many tokens in use within one TTL.
	tokenCacheMax = 10_000
)

func newTokenCache() *recent.Cache[string, Principal] {
	return recent.New[string, Principal](tokenCacheTTL, tokenCacheMax)
}

// dropTokens forgets the checks of the given tokens.
func dropTokens(c *recent.Cache[string, Principal], tokenIDs ...string) {
	c.Drop(func(_ string, p Principal) bool { return slices.Contains(tokenIDs, p.TokenID) })
}
