package whatsapp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/proxytest"
)

// TestVia: WhatsApp's own path, where the base dials the hosts URLs name
// and net/http speaks TLS: a session's clients reach an HTTPS server
// through a SOCKS5, an HTTP or an HTTPS proxy with credentials, the proxy
// asked for the host the URL names, never through the proxy of the base
// (the environment's); the failures say what went wrong, the password
// masked.
func TestVia(t *testing.T) {
	t.Parallel()
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello") //nolint:errcheck // the test reads it
	}))
	t.Cleanup(target.Close)
	targetAddr := strings.TrimPrefix(target.URL, "https://")
	socks := proxytest.SOCKS5(t, "alice", socksPass)
	connect := proxytest.Connect(t, "bob", connectPass, false)
	secure := proxytest.Connect(t, "carol", connectPass, true)
	socksAddr := socks.Addr
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := closed.Addr().String()
	closed.Close()

	// The base trusts the test servers' certificate, the proxy's too, and
	// would send everything to a proxy that is not there (as HTTPS_PROXY
	// would): a session's proxy replaces it.
	newBase := func() *http.Transport {
		b := target.Client().Transport.(*http.Transport).Clone()
		b.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: nobody})
		return b
	}
	tests := []struct {
		name    string
		proxy   string
		base    http.RoundTripper // nil: newBase()
		via     *proxytest.Proxy  // the proxy that carries the request
		wantErr []string          // the error says all of these; nil: the request succeeds
	}{
		{name: "socks5", proxy: "socks5://alice:" + socksPass + "@" + socksAddr, via: socks},
		{name: "http CONNECT", proxy: "http://bob:" + connectPass + "@" + connect.Addr, via: connect},
		{name: "https CONNECT", proxy: "https://carol:" + connectPass + "@" + secure.Addr, via: secure},
		{name: "socks5, wrong password", proxy: "socks5://alice:" + wrongPass + "@" + socksAddr,
			wantErr: []string{"through the proxy socks5://alice:xxxxx@" + socksAddr + ": ", "authentication failed"}},
		{name: "http, wrong password", proxy: "http://bob:" + wrongPass + "@" + connect.Addr,
			wantErr: []string{"through the proxy http://bob:xxxxx@", "the proxy refused the credentials (407 Proxy Authentication Required)"}},
		{name: "http, no credentials", proxy: "http://" + connect.Addr, wantErr: []string{"refused the credentials (407"}},
		{name: "unreachable", proxy: "socks5://alice:" + wrongPass + "@" + nobody, wantErr: []string{"through the proxy socks5://alice:xxxxx@" + nobody, "connection refused"}},
		{name: "unknown scheme", proxy: "socks4://alice:" + wrongPass + "@" + socksAddr,
			wantErr: []string{`the proxy socks4://alice:xxxxx@` + socksAddr + ` has the scheme "socks4": want socks5://, http:// or https://`}},
		{name: "not a URL", proxy: "socks5://alice:" + wrongPass + "@[::1", wantErr: []string{"the proxy is not a URL of the form scheme://[user:password@]host:port"}},
		{name: "no host", proxy: "socks5:alice:" + wrongPass, wantErr: []string{"the proxy is not a URL"}},
		{name: "a base that is no transport", proxy: "socks5://alice:" + wrongPass + "@" + socksAddr, base: withoutDeflate{newBase()},
			wantErr: []string{"the proxy socks5://alice:xxxxx@" + socksAddr + ": the transport whatsapp.withoutDeflate cannot be given a proxy"}},
		{name: "a base that dials TLS itself", proxy: "socks5://alice:" + wrongPass + "@" + socksAddr, base: &http.Transport{DialTLSContext: func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("no") }},
			wantErr: []string{"the transport dials TLS itself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base
			if base == nil {
				base = newBase()
			}
			var before int
			if tt.via != nil {
				before, _ = tt.via.Seen()
			}
			h, err := NewClientHTTP(base).via(tt.proxy)
			if err == nil {
				defer h.closeIdle()
				var res *http.Response
				if res, err = h.media.Get(target.URL); err == nil {
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if string(body) != "hello" {
						t.Errorf("answer %q, want hello", body)
					}
				}
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if n, _ := tt.via.Seen(); n != before+1 || tt.via.Targets()[n-1] != targetAddr {
					t.Errorf("the proxy opened %d tunnels (%v), want one more, to %s", n-before, tt.via.Targets(), targetAddr)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one saying %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, pass := range []string{socksPass, connectPass, wrongPass} {
				if strings.Contains(err.Error(), pass) {
					t.Errorf("error %q holds the password", err)
				}
			}
		})
	}
}
