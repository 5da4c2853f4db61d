package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// RefusedError says why the guard refused a destination. It is not a fault:
// each caller turns it into one naming its own request field.
type RefusedError struct {
	// Host is the host as written, "" when it was an address in standard
	// notation.
	Host string
	// Addr is the refused address: the literal, the address a numeric form
	// or the labels of a name spell, or a DNS answer. It is the zero Addr
	// when the name itself is refused (localhost, metadata names).
	Addr netip.Addr
	// Resolved says Addr is a DNS answer for Host, not spelled by Host.
	Resolved bool
	// Class is why: "a loopback address", "a cloud metadata name", ...
	Class string
}

func (e *RefusedError) Error() string {
	switch {
	case !e.Addr.IsValid():
		return fmt.Sprintf("host %s is %s", e.Host, e.Class)
	case e.Host == "":
		return fmt.Sprintf("%s is %s", e.Addr, e.Class)
	case e.Resolved:
		return fmt.Sprintf("host %s resolves to %s, %s", e.Host, e.Addr, e.Class)
	}
	return fmt.Sprintf("host %s stands for %s, %s", e.Host, e.Addr, e.Class)
}

// CheckHost returns a *RefusedError when host, as written in a URL, may not
// be reached whatever DNS says: an address (in any notation a C resolver
// accepts) that is not public, a name of this machine or of a cloud metadata
// service, or a name that spells a non-public address in its labels
// (127.0.0.1.nip.io, 10-0-0-1.sslip.io). It does no DNS lookup, so it fits
// a check at save time; a Guard runs the same check before it dials, and
// then checks every address the name resolves to.
func CheckHost(host string) error {
	if _, refused := inspect(host); refused != nil {
		return refused
	}
	return nil
}

// inspect reads a host the way the HTTP client and a C resolver would,
// without DNS. addr is valid when host is an address in some notation: it
// must then be dialled as that address, never handed to a resolver that
// might read it differently. refused is why host's own text rules it out.
func inspect(host string) (addr netip.Addr, refused *RefusedError) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		if class := AddrClass(a); class != "" {
			return a, &RefusedError{Addr: a, Class: class}
		}
		return a, nil
	}
	name := strings.ToLower(host)
	// The HTTP client dials the IDNA form of a non-ASCII host: fullwidth
	// digits and dots become an address there, so they must here too.
	if !isASCII(name) {
		if ascii, err := idna.Lookup.ToASCII(name); err == nil {
			name = ascii
		}
	}
	// A trailing dot only marks a name as absolute: "localhost." is
	// localhost, and "127.1." is judged, and dialled, as 127.1.
	name = strings.TrimSuffix(name, ".")
	if a, err := netip.ParseAddr(name); err == nil {
		if class := AddrClass(a); class != "" {
			return a, &RefusedError{Host: host, Addr: a, Class: class}
		}
		return a, nil
	}
	if a, ok := parseNumericIPv4(name); ok {
		if class := AddrClass(a); class != "" {
			return a, &RefusedError{Host: host, Addr: a, Class: class}
		}
		return a, nil
	}
	if class := nameClass(name); class != "" {
		return netip.Addr{}, &RefusedError{Host: host, Class: class}
	}
	for _, a := range spelledAddrs(name) {
		if class := AddrClass(a); class != "" {
			return netip.Addr{}, &RefusedError{Host: host, Addr: a, Class: class}
		}
	}
	return netip.Addr{}, nil
}

var (
	cgnat        = netip.MustParsePrefix("100.64.0.0/10")
	thisNet      = netip.MustParsePrefix("0.0.0.0/8")
	ietf4        = netip.MustParsePrefix("192.0.0.0/24")
	benchmark4   = netip.MustParsePrefix("198.18.0.0/15")
	reserved4    = netip.MustParsePrefix("240.0.0.0/4") // includes 255.255.255.255
	compat6      = netip.MustParsePrefix("::/96")       // deprecated IPv4-compatible ::a.b.c.d
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	teredo       = netip.MustParsePrefix("2001::/32")
	siteLocal6   = netip.MustParsePrefix("fec0::/10")
	metadataAddr = netip.MustParseAddr("169.254.169.254")
	metadata6    = netip.MustParseAddr("fd00:ec2::254")
)

// AddrClass names the class of a non-public address ("a loopback address"),
// or returns "" for an address an outbound request may reach. IPv6 forms
// that carry an IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96 and
// 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) are judged by the IPv4
// address they carry: they reach it.
func AddrClass(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a), nat64Local.Contains(a):
			return AddrClass(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return AddrClass(netip.AddrFrom4([4]byte(b[2:6])))
		case teredo.Contains(a):
			// The client's address, stored inverted in the last 32 bits.
			return AddrClass(netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}))
		}
	}
	switch {
	case a == metadataAddr || a == metadata6:
		return "the cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified(), a.Is4() && thisNet.Contains(a):
		return "an unspecified address"
	case a.IsPrivate(), siteLocal6.Contains(a):
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case cgnat.Contains(a):
		return "a carrier-grade NAT address"
	case reserved4.Contains(a), ietf4.Contains(a), benchmark4.Contains(a), compat6.Contains(a):
		return "a reserved address"
	}
	return ""
}

// nameClass classes host names that mean "this machine" or a cloud metadata
// service whatever DNS says about them. name is lower case without a
// trailing dot.
func nameClass(name string) string {
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"),
		name == "localhost.localdomain", name == "ip6-localhost", name == "ip6-loopback":
		return "a loopback name"
	case name == "metadata" || name == "metadata.google.internal" || name == "metadata.goog" ||
		name == "instance-data" || strings.HasPrefix(name, "instance-data."):
		return "a cloud metadata name"
	}
	return ""
}

// parseNumericIPv4 reads the IPv4 notations inet_aton accepts, which
// getaddrinfo and so many HTTP clients and proxies take as addresses: one to
// four parts, each decimal, octal (leading 0) or hex (leading 0x); the last
// part fills the remaining bytes (127.1 is 127.0.0.1, 2130706433 is
// 127.0.0.1, 10.1.2 is 10.1.0.2).
func parseNumericIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseNumericPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	var u uint32
	for i, v := range vals[:n-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		u |= uint32(v) << (24 - 8*i)
	}
	last := vals[n-1]
	if last > uint64(1)<<(8*(5-n))-1 {
		return netip.Addr{}, false
	}
	u |= uint32(last)
	return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}), true
}

// parseNumericPart reads one part of an inet_aton address; values beyond 32
// bits are refused (older C libraries wrap them, which is no better).
func parseNumericPart(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // inet_aton reads a bare 0x as 0
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	case p == "" || p[0] < '0' || p[0] > '9':
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 32)
	if err != nil {
		return 0, false
	}
	return v, true
}

// spelledAddrs returns the addresses the labels of name spell, the way
// wildcard DNS services (nip.io, sslip.io) answer: four decimal labels in a
// row (app.10.0.0.1.nip.io), four dash-separated numbers in one label
// (app-10-0-0-1.nip.io), or an IPv6 address with dashes for colons
// (--1.sslip.io).
func spelledAddrs(name string) []netip.Addr {
	var out []netip.Addr
	labels := strings.Split(name, ".")
	for i := 0; i+4 <= len(labels); i++ {
		if a, ok := dottedQuad(labels[i : i+4]); ok {
			out = append(out, a)
		}
	}
	for _, l := range labels {
		tokens := strings.Split(l, "-")
		for i := 0; i+4 <= len(tokens); i++ {
			if a, ok := dottedQuad(tokens[i : i+4]); ok {
				out = append(out, a)
			}
		}
		if strings.Count(l, "-") >= 2 {
			if a, err := netip.ParseAddr(strings.ReplaceAll(l, "-", ":")); err == nil && a.Is6() {
				out = append(out, a)
			}
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// dottedQuad reads four decimal octets.
func dottedQuad(parts []string) (netip.Addr, bool) {
	var b [4]byte
	for i, p := range parts {
		if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return netip.Addr{}, false
		}
		v, _ := strconv.Atoi(p)
		if v > 0xff {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom4(b), true
}
