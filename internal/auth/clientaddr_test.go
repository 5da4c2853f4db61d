package auth

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestClientAddr: behind trusted proxies a request is limited by the
// client their X-Forwarded-For names (the right-most hop that is not a
// trusted proxy: what a client writes itself stands left of that), so an
// anonymous flood from one client does not spend everyone's bucket; from
// anywhere else the header is ignored, so forging it buys nothing.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy", "203.0.113.9:4000", nil, "203.0.113.9"},
		{"forged by a client", "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"one proxy", "10.0.0.2:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a client's forgery left of the proxy's hop", "10.0.0.2:4000", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"two proxies", "10.0.0.2:4000", []string{"198.51.100.1, 10.0.0.3"}, "198.51.100.1"},
		{"two header lines", "10.0.0.2:4000", []string{"198.51.100.1", "10.0.0.3"}, "198.51.100.1"},
		{"all hops trusted", "10.0.0.2:4000", []string{"10.0.0.5, 10.0.0.3"}, "10.0.0.5"},
		{"garbage hop", "10.0.0.2:4000", []string{"198.51.100.1, not-an-ip"}, "10.0.0.2"},
		{"no header from a proxy", "10.0.0.2:4000", nil, "10.0.0.2"},
		{"IPv6 proxy", "[::1]:4000", []string{"2001:db8::7"}, "2001:db8::7"},
		{"mapped IPv4 hop", "10.0.0.2:4000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			l := NewLimiter(1, 1, time.Now, trusted...)
			if got := l.clientAddr(r); got != tt.want {
				t.Errorf("limited as %s; want %s", got, tt.want)
			}
		})
	}
	// Without --trusted-proxy the header is never read.
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.2:4000"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	if got := NewLimiter(1, 1, time.Now).clientAddr(r); got != "10.0.0.2" {
		t.Errorf("with no trusted proxy, limited as %s; want the peer", got)
	}
}
