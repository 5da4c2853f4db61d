package whatsapp

// The proxies of the proxy tests: a real SOCKS5 server and an HTTP CONNECT
// proxy on loopback, each recording the tunnels it opened and the bytes it
// carried, and the fake ProxySource that names them.

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	socks5 "github.com/things-go/go-socks5"
)

// tunnels records what went through a proxy: the address of each tunnel
// it opened, and the bytes its clients sent through them.
type tunnels struct {
	mu      sync.Mutex
	targets []string
	up      int64
}

func (l *tunnels) opened(target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.targets = append(l.targets, target)
}

func (l *tunnels) carried(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up += int64(n)
}

// seen is how many tunnels were opened and how many bytes went up them.
func (l *tunnels) seen() (opened int, up int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.targets), l.up
}

func (l *tunnels) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.targets...)
}

// counting counts the bytes written to a proxy's upstream connection.
type counting struct {
	net.Conn
	log *tunnels
}

func (c counting) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.log.carried(n)
	return n, err
}

// startSOCKS runs a SOCKS5 server (github.com/things-go/go-socks5) that
// takes user and pass (RFC 1929) and no client without them; it returns
// its record and its host:port.
func startSOCKS(t *testing.T, user, pass string) (*tunnels, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &tunnels{}
	d := &net.Dialer{Timeout: 5 * time.Second}
	srv := socks5.NewServer(
		socks5.WithCredential(socks5.StaticCredentials{user: pass}),
		socks5.WithDial(func(ctx context.Context, network, addr string) (net.Conn, error) {
			log.opened(addr)
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return counting{Conn: c, log: log}, nil
		}),
	)
	go srv.Serve(ln) //nolint:errcheck // ends with the listener
	t.Cleanup(func() { ln.Close() })
	return log, ln.Addr().String()
}

// connectProxy is an HTTP proxy that opens CONNECT tunnels for the
// clients that give its credentials (Proxy-Authorization, basic).
type connectProxy struct {
	auth string
	log  *tunnels
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Proxy-Authorization") != p.auth {
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "who are you?", http.StatusProxyAuthRequired)
		return
	}
	p.log.opened(r.Host)
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
	// Each side's end ends the tunnel; rw reads what the client sent
	// after its CONNECT, already buffered.
	var once sync.Once
	done := func() { once.Do(func() { up.Close(); conn.Close() }) }
	go func() {
		defer done()
		io.Copy(counting{Conn: up, log: p.log}, rw) //nolint:errcheck // either side may end the tunnel
	}()
	go func() {
		defer done()
		io.Copy(conn, up) //nolint:errcheck // either side may end the tunnel
	}()
}

// startConnect runs an HTTP CONNECT proxy that takes user and pass; tls
// serves it over TLS (an https:// proxy). It returns the proxy's record
// and its server.
func startConnect(t *testing.T, user, pass string, tls bool) (*tunnels, *httptest.Server) {
	t.Helper()
	log := &tunnels{}
	h := &connectProxy{auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), log: log}
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return log, srv
}

// fakeProxies is the ProxySource of the tests: the sessions' proxies as
// set.
type fakeProxies struct {
	mu   sync.Mutex
	urls map[string]string
}

func (f *fakeProxies) set(sessionID, url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls[sessionID] = url
}

func (f *fakeProxies) Proxy(_ context.Context, sessionID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.urls[sessionID], nil
}
