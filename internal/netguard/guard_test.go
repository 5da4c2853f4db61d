package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a table, names it does not know do not exist,
// and it remembers what it was asked.
type fakeResolver struct {
	answers map[string][]netip.Addr
	mu      sync.Mutex
	asked   []string
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	addrs, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		out[i] = net.IPAddr{IP: a.AsSlice()}
	}
	return out, nil
}

func (r *fakeResolver) questions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// listener accepts on loopback and counts the connections it gets.
type listener struct {
	net.Listener
	accepted atomic.Int64
}

func listen(t *testing.T) *listener {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{Listener: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return l
}

func (l *listener) addrPort() netip.AddrPort { return netip.MustParseAddrPort(l.Addr().String()) }

func (l *listener) port() string { return strconv.Itoa(int(l.addrPort().Port())) }

func TestDialRefuses(t *testing.T) {
	ln := listen(t)
	port := ln.port()
	r := &fakeResolver{answers: map[string][]netip.Addr{
		"evil.example":  {netip.MustParseAddr("127.0.0.1")},
		"mixed.example": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
		"v6.example":    {netip.MustParseAddr("::ffff:127.0.0.1")},
		// Were these names asked, they would reach the listener: the
		// guard must judge them by their own text first.
		"localhost.":       {netip.MustParseAddr("127.0.0.1")},
		"127.0.0.1.nip.io": {netip.MustParseAddr("127.0.0.1")},
	}}
	g := New(Options{Resolver: r})
	tests := []struct {
		host string
		want string
	}{
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1 is a loopback address"},
		{"2130706433", "host 2130706433 stands for 127.0.0.1, a loopback address"},
		{"0x7f000001", "host 0x7f000001 stands for 127.0.0.1, a loopback address"},
		{"0177.0.0.1", "host 0177.0.0.1 stands for 127.0.0.1, a loopback address"},
		{"127.1", "host 127.1 stands for 127.0.0.1, a loopback address"},
		{"0x7f.1", "host 0x7f.1 stands for 127.0.0.1, a loopback address"},
		{"localhost.", "host localhost. is a loopback name"},
		{"127.0.0.1.nip.io", "host 127.0.0.1.nip.io stands for 127.0.0.1, a loopback address"},
		{"metadata.google.internal", "host metadata.google.internal is a cloud metadata name"},
		{"evil.example", "host evil.example resolves to 127.0.0.1, a loopback address"},
		{"mixed.example", "host mixed.example resolves to 10.1.2.3, a private address"},
		{"v6.example", "host v6.example resolves to ::ffff:127.0.0.1, a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			conn, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort(tt.host, port))
			if conn != nil {
				conn.Close()
			}
			var refused *RefusedError
			if !errors.As(err, &refused) || refused.Error() != tt.want {
				t.Fatalf("dial %s: %v; want refused: %s", tt.host, err, tt.want)
			}
		})
	}
	if n := ln.accepted.Load(); n != 0 {
		t.Fatalf("the loopback listener was reached %d times", n)
	}
	want := []string{"evil.example", "mixed.example", "v6.example"}
	if got := r.questions(); !slices.Equal(got, want) {
		t.Fatalf("the resolver was asked %q; want only the plain names %q", got, want)
	}
}

// TestDialNumericFormsAsAddresses: with private addresses allowed, a
// numeric host reaches the address it stands for without a DNS question.
func TestDialNumericFormsAsAddresses(t *testing.T) {
	ln := listen(t)
	r := &fakeResolver{}
	g := New(Options{AllowPrivate: true, Resolver: r})
	hosts := []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1", "127.0.0.1."}
	for _, h := range hosts {
		conn, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort(h, ln.port()))
		if err != nil {
			t.Fatalf("dial %s with AllowPrivate: %v", h, err)
		}
		if got := conn.RemoteAddr().String(); got != ln.Addr().String() {
			t.Errorf("dial %s reached %s; want %s", h, got, ln.Addr())
		}
		conn.Close()
	}
	if q := r.questions(); len(q) != 0 {
		t.Fatalf("the resolver was asked %q", q)
	}
}

// TestDialAllowed: names and addresses that pass are dialled; the Public
// list (tests' servers) and AllowPrivate let loopback through.
func TestDialAllowed(t *testing.T) {
	ln := listen(t)
	lo := ln.addrPort().Addr()
	r := &fakeResolver{answers: map[string][]netip.Addr{"public.example": {lo}, "localhost": {lo}}}
	tests := []struct {
		name string
		opts Options
		host string
	}{
		{"public list admits the address", Options{Resolver: r, Public: []netip.AddrPort{ln.addrPort()}}, "127.0.0.1"},
		{"public list admits a name's answer", Options{Resolver: r, Public: []netip.AddrPort{ln.addrPort()}}, "public.example"},
		{"allow private, address", Options{Resolver: r, AllowPrivate: true}, "127.0.0.1"},
		{"allow private, loopback name", Options{Resolver: r, AllowPrivate: true}, "localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := New(tt.opts).DialContext(t.Context(), "tcp", net.JoinHostPort(tt.host, ln.port()))
			if err != nil {
				t.Fatalf("dial %s: %v", tt.host, err)
			}
			conn.Close()
		})
	}
	// The Public list admits one address and port, not its neighbours.
	g := New(Options{Resolver: r, Public: []netip.AddrPort{ln.addrPort()}})
	other := listen(t)
	if _, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort("127.0.0.1", other.port())); err == nil || other.accepted.Load() != 0 {
		t.Fatalf("dial of another loopback port: %v, %d connections", err, other.accepted.Load())
	}
}
