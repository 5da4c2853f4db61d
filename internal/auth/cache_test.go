package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent/token"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestTokenCache: a valid token's check is reused without the database (a
// token revoked behind the service's back still passes within the TTL, which
// is what proves the cache answered); revoking through the service refuses it
// at once, and so does Disconnect (deleteSession's path); a check that read
// the database before a revocation does not cache what it read.
func TestTokenCache(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	n := 0
	s := NewService(db, rand.Reader, time.Now, func() string { n++; return fmt.Sprint("id", n) }, Options{})
	admin, adminTok, err := s.CreateUser(ctx, "admin", true)
	if err != nil {
		t.Fatal(err)
	}
	_, userTok, err := s.CreateUser(ctx, "user", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Authenticate(ctx, userTok)
	if err != nil {
		t.Fatal(err)
	}

	// Revoked in the database only: the cached check still answers.
	db.Token.Update().Where(token.ID(p.TokenID)).SetRevokedAt(time.Now()).ExecX(ctx)
	if _, err := s.Authenticate(ctx, userTok); err != nil {
		t.Fatalf("a cached token refused (%v): the check went to the database", err)
	}
	// Disconnect forgets it: the database's answer counts again.
	s.Disconnect(p.TokenID)
	if _, err := s.Authenticate(ctx, userTok); !errors.Is(err, errInvalid) {
		t.Fatalf("after Disconnect: %v, want the token refused", err)
	}

	// Revoke through the service: refused at once.
	ap, err := s.Authenticate(ctx, adminTok)
	if err != nil || ap.UserID != admin.ID {
		t.Fatalf("admin: %+v, %v", ap, err)
	}
	_, other, err := s.CreateUser(ctx, "other", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke(ctx, ap, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, other); !errors.Is(err, errInvalid) {
		t.Fatalf("after Revoke: %v, want the token refused", err)
	}

	// A check in flight across a revocation does not cache its answer.
	gen := s.cache.Generation()
	dropTokens(s.cache, "some-token")
	s.cache.Put("h", Principal{TokenID: "t"}, gen, time.Now())
	if _, ok := s.cache.Get("h", time.Now()); ok {
		t.Error("a check that started before a revocation was cached")
	}
	// Entries expire.
	s.cache.Put("h", Principal{TokenID: "t"}, s.cache.Generation(), time.Now())
	if _, ok := s.cache.Get("h", time.Now().Add(tokenCacheTTL+time.Second)); ok {
		t.Error("an entry outlived its TTL")
	}
}
