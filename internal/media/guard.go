package media

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Resolver is the part of net.Resolver the guarded dialer uses. Tests inject
// one that maps made-up names to test servers.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// refusedError says that the guard refused a destination. It is not a fault:
// the Loader turns it into one naming the request field.
type refusedError struct {
	host  string // as written in the URL; "" when it was an address literal
	addr  netip.Addr
	class string // "a loopback address", ...
}

func (e *refusedError) Error() string {
	if e.host != "" && !e.addr.IsValid() {
		return fmt.Sprintf("host %s is %s", e.host, e.class)
	}
	return fmt.Sprintf("%s is %s", e.addr, e.class)
}

// guard dials only public addresses. It resolves names itself, so the
// address that is checked is the address that is dialled: no second lookup
// (DNS rebinding) can slip in between. Every address a name resolves to must
// pass; one private answer refuses the name, since an attacker controls which
// of several answers a client would pick.
type guard struct {
	allowPrivate bool
	resolver     Resolver
	// allow, when set, admits one more destination. Only tests set it: they
	// declare their httptest server (on loopback) public, so that redirects
	// from it to other loopback ports can be shown refused.
	allow  func(netip.AddrPort) bool
	dialer net.Dialer
}

func newGuard(allowPrivate bool, r Resolver) *guard {
	if r == nil {
		r = net.DefaultResolver
	}
	g := &guard{allowPrivate: allowPrivate, resolver: r}
	g.dialer = net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	// A second look at the very address the socket connects to: nothing
	// reaches connect() without passing check, whatever path led there.
	g.dialer.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("guard: unexpected dial address %q: %w", address, err)
		}
		if class := g.check(ap); class != "" {
			return &refusedError{addr: ap.Addr(), class: class}
		}
		return nil
	}
	return g
}

// DialContext is the transport's dialer.
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("guard: dial address %q: %w", address, err)
	}
	port, err := netip.ParseAddrPort(net.JoinHostPort("0.0.0.0", portText))
	if err != nil {
		return nil, fmt.Errorf("guard: port of %q: %w", address, err)
	}
	var addrs []netip.Addr
	name := ""
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		name = host
		if class := metadataName(host); class != "" && !g.allowPrivate {
			return nil, &refusedError{host: host, class: class}
		}
		ips, err := g.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("guard: resolve %s: %w", host, err)
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
			return nil, &refusedError{host: name, addr: a, class: class}
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
func (g *guard) check(ap netip.AddrPort) string {
	if g.allowPrivate || (g.allow != nil && g.allow(ap)) {
		return ""
	}
	return addrClass(ap.Addr())
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	reserved4 = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	metadata  = netip.MustParseAddr("169.254.169.254")
	metadata6 = netip.MustParseAddr("fd00:ec2::254")
)

// addrClass names the class of a non-public address ("a loopback address"),
// or returns "" for an address a fetch may reach. IPv6 forms that embed an
// IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16)
// are judged by the IPv4 address they carry: they reach it.
func addrClass(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return addrClass(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return addrClass(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case a == metadata || a == metadata6:
		return "the cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified(), a.Is4() && thisNet.Contains(a):
		return "an unspecified address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case cgnat.Contains(a):
		return "a carrier-grade NAT address"
	case reserved4.Contains(a):
		return "a reserved address"
	}
	return ""
}

// metadataName classes host names that mean "this machine" or a cloud
// metadata service whatever DNS says about them.
func metadataName(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return "a loopback name"
	case h == "metadata" || h == "metadata.google.internal" || h == "metadata.goog" ||
		h == "instance-data" || strings.HasPrefix(h, "instance-data."):
		return "a cloud metadata name"
	}
	return ""
}
