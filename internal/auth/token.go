// Package auth knows who is calling: users and their tokens, the principal a
// token stands for, the HTTP middleware that finds it, and the per-token rate
// limit. Authorization of individual objects (does this token reach that
// session?) is answered by Principal.Reaches; the resolvers ask it.
package auth

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
)

// Token prefixes: what a token is can be read off it, as with GitHub's tokens.
const (
	UserPrefix    = "wgu_"
	SessionPrefix = "wgs_"
)

// tokenSecretLen is the number of base62 characters after the prefix: about 238
// bits of randomness, well over the 128 bits that make a fast hash safe.
const tokenSecretLen = 40

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newToken returns prefix followed by tokenSecretLen random base62 characters.
func newToken(rand io.Reader, prefix string) (string, error) {
	var b strings.Builder
	b.WriteString(prefix)
	buf := make([]byte, 64)
	for b.Len() < len(prefix)+tokenSecretLen {
		if _, err := io.ReadFull(rand, buf); err != nil {
			return "", fmt.Errorf("read random bytes: %w", err)
		}
		for _, c := range buf {
			// 248 = 4*62: rejecting the rest keeps every character equally likely.
			if c < 248 && b.Len() < len(prefix)+tokenSecretLen {
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String(), nil
}

// Hash is what is stored of a token.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// FromHeader extracts the token of an Authorization header value, with or
// without the "Bearer " scheme.
func FromHeader(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	return v
}
