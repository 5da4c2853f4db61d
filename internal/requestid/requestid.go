// Package requestid gives every HTTP request an id, carried in its context and
// echoed in the X-Request-Id header, so an internal error shown to a client
// can be found in the log. A call forwarded to another process of a cluster
// carries it in the same header, so both processes' lines join.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// Header carries the id.
const Header = "X-Request-Id"

type key struct{}

// From returns the request id of ctx, or "" outside a request.
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// Of returns the id of r: its context's, or else a well-formed one in its
// header; "" when it has neither.
func Of(r *http.Request) string {
	if id := From(r.Context()); id != "" {
		return id
	}
	if id := r.Header.Get(Header); wellFormed(id) {
		return id
	}
	return ""
}

// Middleware assigns the id: a well-formed X-Request-Id from the client is
// kept, anything else is replaced by a random one.
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !wellFormed(id) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set(Header, id)
		next.ServeHTTP(w, r.WithContext(With(r.Context(), id)))
	})
}

func wellFormed(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
