package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/auth"
)

// Close codes of graphql-transport-ws that gqlgen does not send by itself.
const (
	closeBadRequest  = 4400
	closeForbidden   = 4403
	closeInitTimeout = 4408
)

// InitTimeout is how long a websocket may stay silent before its
// connection_init.
const InitTimeout = 10 * time.Second

// MaxWebsocketMessage caps one websocket message.
const MaxWebsocketMessage = 1 << 20

// websocketTransport serves graphql-transport-ws and the legacy graphql-ws
// over gorilla/websocket, authenticating in connection_init.
func websocketTransport(a *auth.Service) transport.Websocket {
	limit := int64(MaxWebsocketMessage)
	return transport.Websocket{
		Implementation:        gorillaImplementation{initTimeout: InitTimeout},
		InitFunc:              websocketInit(a),
		KeepAlivePingInterval: 10 * time.Second,
		PingPongInterval:      20 * time.Second,
		PayloadReadLimit:      &limit,
	}
}

// websocketInit authenticates a socket: a token in the connection_init
// payload (Authorization, authorization or token) wins; otherwise the
// Authorization header of the upgrade request counts. A bad or missing token
// closes the socket with 4403.
func websocketInit(a *auth.Service) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		forbidden := transport.WithWebsocketCloseCode(ctx, closeForbidden)
		raw := ""
		for _, k := range []string{"Authorization", "authorization", "token"} {
			v, ok := payload[k]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return transport.WithWebsocketCloseCode(ctx, closeBadRequest), nil, fmt.Errorf("connection_init payload: %s must be a string", k)
			}
			if s != "" {
				raw = auth.FromHeader(s)
				break
			}
		}
		var (
			p   *auth.Principal
			err error
		)
		if raw != "" {
			p, err = a.Authenticate(ctx, raw)
			ctx = auth.WithPrincipal(ctx, p)
		} else {
			p, err = auth.Require(ctx) // the upgrade's Authorization header
		}
		if err != nil {
			return forbidden, nil, errors.New("forbidden: invalid, revoked or missing token; send it in the connection_init payload as Authorization")
		}
		// The socket ends when its token is revoked: gqlgen closes a
		// connection whose context ends.
		bound, err := a.Bind(ctx, p)
		if err != nil {
			return forbidden, nil, errors.New("forbidden: invalid or revoked token")
		}
		return bound, nil, nil
	}
}

// gorillaImplementation adapts gorilla/websocket to gqlgen's transport.
type gorillaImplementation struct {
	initTimeout time.Duration
}

func (g gorillaImplementation) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		Subprotocols: opts.Subprotocols,
		// Tokens travel in headers or connection_init, never in cookies, so a
		// cross-origin page gains nothing it could not do with fetch.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	conn, err := up.Upgrade(hijacker{w}, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	c := &gorillaConn{conn: conn}
	// gqlgen's own init timeout closes with 1002; the protocol asks for 4408.
	c.initTimer = time.AfterFunc(g.initTimeout, func() {
		_ = c.WriteClose(closeInitTimeout, "connection initialisation timeout")
		_ = conn.Close()
	})
	return c, nil
}

type gorillaConn struct {
	conn      *websocket.Conn
	initTimer *time.Timer
	once      sync.Once
	wmu       sync.Mutex // gorilla allows one writer at a time
	frame     []byte     // the last result's frame, reused; wmu guards it
}

func (c *gorillaConn) Close() error {
	c.initTimer.Stop()
	return c.conn.Close()
}

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	mt, r, err := c.conn.NextReader()
	if err != nil {
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
			return mt, nil, transport.ErrWebsocketClosed
		}
		return mt, nil, err
	}
	first := false
	c.once.Do(func() { c.initTimer.Stop(); first = true })
	if !first {
		return mt, r, nil
	}
	// gqlgen neither answers nor closes a connection_init whose payload is
	// not an object: it leaves the socket open for ever. The first message
	// is checked here, whole (it is bounded by the read limit).
	msg, err := io.ReadAll(r)
	if err != nil {
		return mt, nil, err
	}
	if problem := initProblem(msg); problem != "" {
		_ = c.WriteClose(closeBadRequest, problem)
		_ = c.conn.Close()
		return mt, nil, transport.ErrWebsocketClosed
	}
	return mt, bytes.NewReader(msg), nil
}

// initProblem says what is wrong with a first message that is a
// connection_init, or "". Any other first message is gqlgen's to refuse.
func initProblem(msg []byte) string {
	var m struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return "the first message must be a JSON object such as {\"type\":\"connection_init\"}"
	}
	if m.Type != "connection_init" {
		return ""
	}
	p := bytes.TrimSpace(m.Payload)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) || p[0] == '{' {
		return ""
	}
	return "connection_init payload must be a JSON object such as {\"Authorization\":\"<token>\"}"
}

func (c *gorillaConn) WriteJSON(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// A client that stops reading must not hold the writer forever.
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if frame, ok := appendResult(c.frame[:0], v); ok {
		c.frame = nil
		if cap(frame) <= maxKeptFrame {
			c.frame = frame
		}
		return c.conn.WriteMessage(websocket.TextMessage, frame)
	}
	return c.conn.WriteJSON(v)
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
}

func (c *gorillaConn) Subprotocol() string               { return c.conn.Subprotocol() }
func (c *gorillaConn) SetReadLimit(n int64)              { c.conn.SetReadLimit(n) }
func (c *gorillaConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }

// hijacker lets gorilla take over a connection through middleware that
// wraps the ResponseWriter (gorilla asserts http.Hijacker directly; the
// ResponseController follows Unwrap).
type hijacker struct{ http.ResponseWriter }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}
