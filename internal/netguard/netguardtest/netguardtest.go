// Package netguardtest holds what the tests of guarded outbound fetches
// (media sources, link previews) share: a resolver that answers from a
// table, so made-up names can lead to loopback test servers, and a test
// server that counts the requests reaching it and lets handlers that hang
// go when the test ends.
package netguardtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
)

// Resolver answers from a table; names it does not know do not exist.
type Resolver map[string][]netip.Addr

// LookupIPAddr implements netguard.Resolver.
func (r Resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		out[i] = net.IPAddr{IP: a.AsSlice()}
	}
	return out, nil
}

// Server is an httptest server on loopback that counts its requests.
type Server struct {
	*httptest.Server
	hits    atomic.Int64
	release chan struct{} // closed at cleanup: handlers that hang return
}

// NewServer starts a Server handling with h; the test's cleanup stops it.
func NewServer(t testing.TB, h http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: LIFO
	return s
}

// Hits is how many requests reached the server.
func (s *Server) Hits() int64 { return s.hits.Load() }

// AddrPort is the server's address.
func (s *Server) AddrPort(t testing.TB) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// Port is the server's port, as a URL writes it.
func (s *Server) Port(t testing.TB) string {
	return strconv.Itoa(int(s.AddrPort(t).Port()))
}

// Hang blocks a handler until the client leaves or the test ends.
func (s *Server) Hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}
