package whatsapp

import (
	"net/http"

	"go.mau.fi/whatsmeow"
)

// ClientHTTP is the HTTP of a manager's clients: one transport for all of
// them (whatsmeow's NewClient clones http.DefaultTransport for each, with
// its own pool of idle connections), the websockets without compression.
// The load program's raw clients (whatsapp/rawclient) use it too.
type ClientHTTP struct {
	media, websocket *http.Client
}

// NewClientHTTP makes clients' HTTP over base (nil: a clone of
// http.DefaultTransport).
func NewClientHTTP(base http.RoundTripper) ClientHTTP {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return ClientHTTP{
		media:     &http.Client{Transport: base},
		websocket: &http.Client{Transport: withoutDeflate{base}},
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
