// Package netguard keeps wagraph's outbound connections (media fetches,
// webhook deliveries, the geocoder) off loopback, private, link-local,
// metadata and other non-public addresses unless --allow-private-urls says
// otherwise.
//
// One set of rules serves both moments a URL is judged: CheckHost reads a
// host as written (no DNS) when a URL is saved, and a Guard dials, running
// the same check and then checking every address a name resolves to, at the
// moment the socket connects. A URL that passed at save time can still be
// refused at dial time; one refused at save time is refused at dial time.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// Resolver is the part of net.Resolver a Guard uses. Tests inject one that
// maps made-up names to test servers.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure a Guard.
type Options struct {
	// AllowPrivate lets every destination through (--allow-private-urls).
	// Numeric hosts are still dialled as the address they spell.
	AllowPrivate bool
	// Resolver resolves names; nil is net.DefaultResolver.
	Resolver Resolver
	// Public lists destinations admitted whatever their address. Only tests
	// set it: they declare their httptest server (on loopback) public, so
	// that redirects from it to other loopback ports can be shown refused.
	Public []netip.AddrPort
}

// Guard dials only public addresses. It resolves names itself, so the
// address that is checked is the address that is dialled: no second lookup
// (DNS rebinding) can slip in between. Every address a name resolves to must
// pass; one private answer refuses the name, since an attacker controls which
// of several answers a client would pick.
type Guard struct {
	allowPrivate bool
	resolver     Resolver
	public       []netip.AddrPort
	dialer       net.Dialer
}

// New returns a Guard.
func New(opts Options) *Guard {
	g := &Guard{allowPrivate: opts.AllowPrivate, resolver: opts.Resolver, public: slices.Clone(opts.Public)}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	g.dialer = net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	// A second look at the very address the socket connects to: nothing
	// reaches connect() without passing check, whatever path led there.
	g.dialer.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("netguard: unexpected dial address %q: %w", address, err)
		}
		if class := g.check(ap); class != "" {
			return &RefusedError{Addr: ap.Addr(), Class: class}
		}
		return nil
	}
	return g
}

// Transport returns an HTTP transport that dials through g and never through
// a proxy (a proxy would dial for it and bypass the guard). Callers may
// adjust its timeouts before first use.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         g.DialContext,
		ForceAttemptHTTP2:   true, // a custom DialContext turns HTTP/2 off unless asked
		TLSHandshakeTimeout: 15 * time.Second,
		MaxIdleConns:        16,
		IdleConnTimeout:     90 * time.Second,
	}
}

// DialContext connects to address ("host:port") if every address it means
// is public, or if the guard allows private addresses.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial address %q: %w", address, err)
	}
	port, err := netip.ParseAddrPort(net.JoinHostPort("0.0.0.0", portText))
	if err != nil {
		return nil, fmt.Errorf("netguard: port of %q: %w", address, err)
	}
	literal, refused := inspect(host)
	var addrs []netip.Addr
	name := ""
	switch {
	case literal.IsValid():
		// Whatever its notation, an address is dialled as itself: a
		// resolver might read 0177.0.0.1 or 2130706433 otherwise. check
		// below judges it (and admits the tests' public servers).
		addrs = []netip.Addr{literal}
		if refused != nil {
			name = refused.Host
		}
	case refused != nil && !g.allowPrivate:
		return nil, refused
	default:
		name = host
		ips, err := g.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("netguard: resolve %s: %w", host, err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip.IP); ok {
				addrs = append(addrs, a.WithZone(ip.Zone))
			}
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	targets := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port.Port())
		if class := g.check(ap); class != "" {
			return nil, &RefusedError{Host: name, Addr: a, Resolved: !literal.IsValid(), Class: class}
		}
		targets = append(targets, ap)
	}
	var errs []error
	for _, ap := range targets {
		conn, err := g.dialer.DialContext(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// check returns why ap may not be dialled, or "".
func (g *Guard) check(ap netip.AddrPort) string {
	if g.allowPrivate || slices.Contains(g.public, ap) {
		return ""
	}
	return AddrClass(ap.Addr())
}
