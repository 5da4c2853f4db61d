package whatsapp

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.mau.fi/whatsmeow"
)

// ClientHTTP is the HTTP of a manager's clients: one transport for all of
// them (whatsmeow's NewClient clones http.DefaultTransport for each, with
// its own pool of idle connections), the websockets without compression.
// The load program's raw clients (whatsapp/rawclient) use it too.
type ClientHTTP struct {
	base             http.RoundTripper
	media, websocket *http.Client
	// proxied is the transport of a session's own clients (via); nil for
	// the manager's.
	proxied *http.Transport
}

// NewClientHTTP makes clients' HTTP over base (nil: a clone of
// http.DefaultTransport).
func NewClientHTTP(base http.RoundTripper) ClientHTTP {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return clientHTTPOver(base)
}

func clientHTTPOver(base http.RoundTripper) ClientHTTP {
	return ClientHTTP{
		base:      base,
		media:     &http.Client{Transport: base},
		websocket: &http.Client{Transport: withoutDeflate{base}},
	}
}

// rerouting is a base transport that sends connections elsewhere than to
// the hosts URLs name (wafake.Redirect: the simulated network's address,
// TLS ones in plain TCP). Through is a copy of it whose connections dial
// opens, to the address it would itself have dialed: a session's proxy is
// asked for that address, so the session's connection to the simulated
// network goes through its proxy as well.
type rerouting interface {
	Through(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport
}

// proxiedIdleTimeout closes a proxied transport's idle connections that
// outlived its client (an upload that ended after the client was closed).
const proxiedIdleTimeout = 90 * time.Second

// via returns HTTP clients of their own whose every connection goes
// through the proxy at proxyURL (ProxySource): the base's settings, its
// dials made by the proxy. The base must be a *http.Transport or
// rerouting; its environment proxy (HTTP_PROXY) is not used. Errors name
// the proxy with its password masked. Close the result's idle connections
// (closeIdle) once its client is over.
func (h ClientHTTP) via(proxyURL string) (ClientHTTP, error) {
	var tlsConf *tls.Config // an https:// proxy's: the base's roots
	if t, ok := h.base.(*http.Transport); ok {
		tlsConf = t.TLSClientConfig
	}
	dial, shown, err := proxyDialer(proxyURL, tlsConf)
	if err != nil {
		return ClientHTTP{}, err
	}
	var t *http.Transport
	switch base := h.base.(type) {
	case rerouting:
		t = base.Through(dial)
	case *http.Transport:
		if base.DialTLSContext != nil || base.DialTLS != nil { // either would bypass the proxy
			return ClientHTTP{}, fmt.Errorf("the proxy %s: the transport dials TLS itself, so its connections cannot go through a proxy", shown)
		}
		t = base.Clone()
		// The session's proxy, not the environment's: net/http would
		// otherwise ask HTTP_PROXY for the host over the session's proxy.
		t.Proxy, t.OnProxyConnectResponse, t.GetProxyConnectHeader = nil, nil, nil
		t.DialContext, t.Dial = dial, nil
	default:
		return ClientHTTP{}, fmt.Errorf("the proxy %s: the transport %T cannot be given a proxy", shown, h.base)
	}
	t.IdleConnTimeout = proxiedIdleTimeout
	c := clientHTTPOver(t)
	c.proxied = t
	return c, nil
}

// closeIdle closes the idle connections of a session's own clients (via):
// nothing holds them once the client is over.
func (h ClientHTTP) closeIdle() {
	if h.proxied != nil {
		h.proxied.CloseIdleConnections()
	}
}

// Use gives cli these HTTP clients. whatsmeow keeps the pointers;
// it never changes the clients themselves (only SetProxy would, and the
// manager never calls it).
func (h ClientHTTP) Use(cli *whatsmeow.Client) {
	cli.SetMediaHTTPClient(h.media)
	cli.SetWebsocketHTTPClient(h.websocket)
	cli.SetPreLoginHTTPClient(h.websocket)
}

// withoutDeflate removes the websocket compression offer
// (permessage-deflate) from a websocket handshake. whatsmeow offers it with
// context takeover (socket/dialopts.go), and WhatsApp's server accepts it:
// each connection then holds a compress/flate writer for its whole life
// (0.7 MB in use in a heap profile; coder/websocket documents 1.2 MB), a
// 32 KB sliding window and a reader. With 200 idle sessions that was 87%
// of the server's heap. Compressing buys nothing: after the Noise
// handshake every frame is AES-GCM ciphertext, which deflate cannot
// shrink. Without the offer the server answers no extension (RFC 7692:
// the client offers, the server may only accept), and the connection
// sends and reads plain frames.
type withoutDeflate struct{ base http.RoundTripper }

func (t withoutDeflate) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Sec-WebSocket-Extensions") == "" {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper must not change its request
	req.Header.Del("Sec-WebSocket-Extensions")
	return t.base.RoundTrip(req)
}
