package whatsapp

// A session's proxy: its WhatsApp connection and its media go through it,
// over HTTP clients of that session alone (transport.go). whatsmeow's own
// SetProxy and SetSOCKSProxy are never used: they rewrite the transports
// of HTTP clients that every session of the manager shares.

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"
)

// ProxySource names the proxy of each session (the per-session settings):
// its URL, socks5://[user:pass@]host:port or http(s)://[user:pass@]host:port,
// or "" for none. The manager asks at every connect, so a change applies
// from the session's next connect and never cuts a live connection.
type ProxySource interface {
	Proxy(ctx context.Context, sessionID string) (string, error)
}

// ProxyError is a failure to connect through a session's proxy: the proxy
// could not be reached, refused the credentials, or could not connect to
// WhatsApp. It never holds the proxy's password.
type ProxyError struct {
	Proxy string // the proxy's URL, its password masked (url.URL.Redacted)
	Err   error
}

func (e *ProxyError) Error() string { return "through the proxy " + e.Proxy + ": " + e.Err.Error() }
func (e *ProxyError) Unwrap() error { return e.Err }

// proxyDialTimeout bounds the connection to the proxy and its handshake
// when the caller's context has no deadline of its own.
const proxyDialTimeout = 30 * time.Second

// dialFunc opens a connection to addr, as net.Dialer.DialContext does.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// proxyDialer returns a dial function that asks the proxy at raw to
// connect to the address it is given; tlsConf is the TLS configuration of
// an https:// proxy's own connection (nil: the system's roots). Errors
// name the proxy with its password masked: never raw, which holds it.
func proxyDialer(raw string, tlsConf *tls.Config) (dialFunc, string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		// url.Parse's error quotes the whole URL, password and all.
		return nil, "", errors.New("the proxy is not a URL of the form scheme://[user:password@]host:port")
	}
	shown := u.Redacted()
	port := map[string]string{"socks5": "1080", "http": "80", "https": "443"}[u.Scheme]
	if port == "" {
		return nil, "", fmt.Errorf("the proxy %s has the scheme %q: want socks5://, http:// or https://", shown, u.Scheme)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	direct := &net.Dialer{Timeout: proxyDialTimeout, KeepAlive: 30 * time.Second}
	var dial dialFunc
	if u.Scheme == "socks5" {
		var auth *proxy.Auth
		if u.User != nil {
			pass, _ := u.User.Password()
			auth = &proxy.Auth{User: u.User.Username(), Password: pass}
		}
		d, err := proxy.SOCKS5("tcp", addr, auth, direct)
		if err != nil {
			return nil, "", fmt.Errorf("the proxy %s: %w", shown, err)
		}
		dial = d.(proxy.ContextDialer).DialContext
	} else {
		c := &connectDialer{addr: addr, direct: direct}
		if u.Scheme == "https" {
			c.tls = tlsConf.Clone()
			if c.tls == nil {
				c.tls = &tls.Config{}
			}
			if c.tls.ServerName == "" {
				c.tls.ServerName = u.Hostname()
			}
		}
		if u.User != nil {
			pass, _ := u.User.Password()
			c.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
		}
		dial = c.DialContext
	}
	return func(ctx context.Context, network, target string) (net.Conn, error) {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, proxyDialTimeout)
			defer cancel()
		}
		conn, err := dial(ctx, network, target)
		if err != nil {
			return nil, &ProxyError{Proxy: shown, Err: err}
		}
		return conn, nil
	}, shown, nil
}

// connectDialer opens connections through an HTTP proxy with CONNECT
// (RFC 9110 §9.3.6), as net/http does for its Transport.Proxy: the proxy's
// answer 200 makes the connection a tunnel to the target. net/http's own
// support cannot serve here: it asks the proxy for the host a URL names,
// where the sandbox must have it connect to the simulated network.
type connectDialer struct {
	addr   string      // the proxy's host:port
	tls    *tls.Config // an https:// proxy's; nil for http://
	auth   string      // the Proxy-Authorization header; "" without credentials
	direct *net.Dialer
}

func (c *connectDialer) DialContext(ctx context.Context, network, target string) (_ net.Conn, err error) {
	var conn net.Conn
	if c.tls != nil {
		conn, err = (&tls.Dialer{NetDialer: c.direct, Config: c.tls}).DialContext(ctx, network, c.addr)
	} else {
		conn, err = c.direct.DialContext(ctx, network, c.addr)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	// The handshake ends with ctx: its deadline, or its cancellation.
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if c.auth != "" {
		req.Header.Set("Proxy-Authorization", c.auth)
	}
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("send CONNECT %s: %w", target, err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, fmt.Errorf("read the answer to CONNECT %s: %w", target, err)
	}
	res.Body.Close()
	switch {
	case res.StatusCode == http.StatusProxyAuthRequired:
		return nil, fmt.Errorf("the proxy refused the credentials (%s)", res.Status)
	case res.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("the proxy refused to connect to %s (%s)", target, res.Status)
	}
	if !stop() {
		return nil, ctx.Err()
	}
	_ = conn.SetDeadline(time.Time{})
	if br.Buffered() > 0 { // the target spoke first, in the same packet
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
