package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// BenchmarkAuthenticate: the token check every request makes (a valid
// token's check is cached for a few seconds; an unknown token's is one SQLite
// query joining the token's user, every time), for a valid user
// token among 100 users' and for a token that is no one's, against a SQLite
// file opened as the app opens it.
func BenchmarkAuthenticate(b *testing.B) {
	db := dbtest.Open(b).Ent
	b.Cleanup(func() { db.Close() })
	n := 0
	s := NewService(db, rand.Reader, time.Now, func() string { n++; return fmt.Sprint("id", n) }, Options{})
	ctx := context.Background()
	var raw string
	for i := range 100 {
		_, tok, err := s.CreateUser(ctx, fmt.Sprint("user", i), i == 0)
		if err != nil {
			b.Fatal(err)
		}
		if i == 50 {
			raw = tok
		}
	}
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := s.Authenticate(ctx, raw)
			if err != nil || p.UserName != "user50" {
				b.Fatalf("Authenticate: %+v, %v; want user50", p, err)
			}
		}
	})
	b.Run("unknown", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Authenticate(ctx, "wgu_noSuchToken0123456789abcdefghijklmnopq"); !errors.Is(err, errInvalid) {
				b.Fatalf("Authenticate of an unknown token: %v, want errInvalid", err)
			}
		}
	})
}
