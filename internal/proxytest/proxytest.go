// Package proxytest runs proxies on loopback for the tests of the
// sessions' proxies: a real SOCKS5 server (github.com/things-go/go-socks5)
// and an HTTP CONNECT proxy, each taking one user's credentials and
// recording the tunnels it opened and the bytes its clients sent up them.
// It is imported by tests only.
package proxytest

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	socks5 "github.com/things-go/go-socks5"
)

// Proxy is a running proxy and what went through it.
type Proxy struct {
	// Scheme and Addr (host:port) are the proxy's URL without
	// credentials: socks5, http or https (CONNECT over TLS, with
	// httptest's certificate).
	Scheme, Addr string
	// Server is the CONNECT proxy's server (its Client trusts an https
	// one); nil for SOCKS5.
	Server *httptest.Server

	mu      sync.Mutex
	targets []string
	up      int64
}

// URL is the proxy's URL with user and pass ("" for none).
func (p *Proxy) URL(user, pass string) string {
	u := url.URL{Scheme: p.Scheme, Host: p.Addr}
	if user != "" {
		u.User = url.UserPassword(user, pass)
	}
	return u.String()
}

// Seen is how many tunnels the proxy opened and how many bytes its
// clients sent up them.
func (p *Proxy) Seen() (tunnels int, up int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.targets), p.up
}

// Targets are the addresses the proxy was asked to connect to, in order.
func (p *Proxy) Targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

func (p *Proxy) opened(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targets = append(p.targets, target)
}

func (p *Proxy) carried(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up += int64(n)
}

// counting counts the bytes written to a proxy's upstream connection.
type counting struct {
	net.Conn
	p *Proxy
}

func (c counting) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.p.carried(n)
	return n, err
}

// SOCKS5 runs a SOCKS5 server that takes user and pass (RFC 1929) and no
// client without them, until the test ends.
func SOCKS5(t testing.TB, user, pass string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Scheme: "socks5", Addr: ln.Addr().String()}
	d := &net.Dialer{Timeout: 5 * time.Second}
	srv := socks5.NewServer(
		socks5.WithCredential(socks5.StaticCredentials{user: pass}),
		socks5.WithDial(func(ctx context.Context, network, addr string) (net.Conn, error) {
			p.opened(addr)
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return counting{Conn: c, p: p}, nil
		}),
	)
	go srv.Serve(ln) //nolint:errcheck // ends with the listener
	t.Cleanup(func() { ln.Close() })
	return p
}

// Connect runs an HTTP proxy that opens CONNECT tunnels for the clients
// that give user and pass (Proxy-Authorization, basic), over TLS when
// secure is set (an https:// proxy), until the test ends.
func Connect(t testing.TB, user, pass string, secure bool) *Proxy {
	t.Helper()
	p := &Proxy{Scheme: "http"}
	h := &connectHandler{auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), p: p}
	if secure {
		p.Scheme, p.Server = "https", httptest.NewTLSServer(h)
	} else {
		p.Server = httptest.NewServer(h)
	}
	p.Addr = strings.TrimPrefix(strings.TrimPrefix(p.Server.URL, "http://"), "https://")
	t.Cleanup(p.Server.Close)
	return p
}

type connectHandler struct {
	auth string
	p    *Proxy
}

func (h *connectHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Proxy-Authorization") != h.auth {
		w.Header().Set("Proxy-Authenticate", `Basic realm="proxytest"`)
		http.Error(w, "who are you?", http.StatusProxyAuthRequired)
		return
	}
	h.p.opened(r.Host)
	up, err := net.DialTimeout("tcp", r.Host, 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
		up.Close()
		conn.Close()
		return
	}
	// Either side's end ends the tunnel; rw reads what the client sent
	// after its CONNECT, maybe already buffered.
	var once sync.Once
	done := func() { once.Do(func() { up.Close(); conn.Close() }) }
	go func() {
		defer done()
		io.Copy(counting{Conn: up, p: h.p}, rw) //nolint:errcheck // either side may end the tunnel
	}()
	go func() {
		defer done()
		io.Copy(conn, up) //nolint:errcheck // either side may end the tunnel
	}()
}
