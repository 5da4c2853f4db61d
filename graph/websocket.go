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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/fault"
)

// Close codes of graphql-transport-ws (its PROTOCOL.md) that gqlgen does
// not send by itself. The legacy graphql-ws defines none; its sockets are
// closed with the same ones.
const (
	closeBadRequest   = 4400
	closeUnauthorized = 4401
	closeForbidden    = 4403
	closeInitTimeout  = 4408
	closeSubscriberIn = 4409
	closeTooManyInits = 4429
	closeInternal     = 4500
)

// maxCloseReason is the longest close reason a close frame carries (a
// control frame's 125 bytes less the code's 2).
const maxCloseReason = 123

// The reasons a socket is refused at its connection_init. Each says what
// to send instead: a client library shows the reason, and nothing else.
const (
	reasonNoToken   = `Forbidden: no valid token in connection_init (send {"Authorization":"Bearer <token>"})`
	reasonBadToken  = "Forbidden: invalid or revoked token"
	reasonAuthError = "Internal server error: the token could not be checked; try again"
	reasonRevoked   = "Forbidden: the token was revoked, or its session deleted"
)

// InitTimeout is how long a websocket may stay silent before its
// connection_init.
const InitTimeout = 10 * time.Second

// MaxWebsocketMessage caps one websocket message.
const MaxWebsocketMessage = 1 << 20

// websocketTransport serves graphql-transport-ws and the legacy graphql-ws
// over gorilla/websocket, authenticating in connection_init.
func websocketTransport(a *auth.Service, charger ConnectionCharger) transport.Websocket {
	limit := int64(MaxWebsocketMessage)
	s := &sockets{}
	return transport.Websocket{
		Implementation:        gorillaImplementation{initTimeout: InitTimeout, sockets: s},
		InitFunc:              websocketInit(a, charger, s),
		KeepAlivePingInterval: 10 * time.Second,
		PingPongInterval:      20 * time.Second,
		PayloadReadLimit:      &limit,
	}
}

// websocketInit authenticates a socket: a token in the connection_init
// payload wins (initToken says where it may be); otherwise the
// Authorization header of the upgrade request counts. A refusal closes the
// socket with a code and a reason that says what to send instead.
func websocketInit(a *auth.Service, charger ConnectionCharger, s *sockets) transport.WebsocketInitFunc {
	if charger == nil {
		charger = noCharge{}
	}
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		request := ctx
		raw, problem := initToken(payload)
		if problem != "" {
			return refuse(ctx, closeBadRequest, "Bad request: "+problem)
		}
		var (
			p   *auth.Principal
			err error
		)
		if raw != "" {
			p, err = a.Authenticate(ctx, raw)
			ctx = auth.WithPrincipal(ctx, p)
		} else if p, err = auth.Require(ctx); err != nil && fault.CodeOf(err) != fault.Internal {
			// Neither the payload nor the upgrade's header (a browser
			// cannot set one) had a valid token: charged to the address,
			// as a request without one is.
			if cerr := charger.ChargeConnection(ctx, nil); cerr != nil {
				return refuse(ctx, closeTooManyInits, "Too many requests: "+fault.From(cerr).Message)
			}
			return refuse(ctx, closeForbidden, reasonNoToken)
		}
		if err != nil {
			if fault.CodeOf(err) != fault.Internal {
				if cerr := charger.ChargeConnection(ctx, nil); cerr != nil {
					return refuse(ctx, closeTooManyInits, "Too many requests: "+fault.From(cerr).Message)
				}
			}
			return refuseFor(ctx, err)
		}
		// An upgrade without a token is charged here, to the token's user.
		if err := charger.ChargeConnection(ctx, p); err != nil {
			return refuse(ctx, closeTooManyInits, "Too many requests: "+fault.From(err).Message)
		}
		// The socket ends when its token is revoked: gqlgen closes a
		// connection whose context ends.
		bound, err := a.Bind(ctx, p)
		if err != nil {
			return refuseFor(ctx, err)
		}
		s.bind(request, bound)
		return context.WithValue(bound, onSocketKey{}, &socketState{}), nil, nil
	}
}

// onSocketKey marks the context of a socket's operations with its
// socketState.
type onSocketKey struct{}

// socketState is what one socket's operations share.
type socketState struct {
	subscriptions atomic.Int32 // open on it (capSubscriptions)
}

// socketOf returns the state of the socket ctx's operation came over; nil
// for an HTTP request.
func socketOf(ctx context.Context) *socketState {
	s, _ := ctx.Value(onSocketKey{}).(*socketState)
	return s
}

// recheckSockets checks the token of a socket again at each operation, as
// an HTTP request's is at each request: the socket's principal was fixed
// at connection_init, and a revocation whose notice did not reach this
// process must still stop it (auth.Service.Recheck; a token found revoked
// closes the socket).
func recheckSockets(a *auth.Service, present graphql.ErrorPresenterFunc) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if socketOf(ctx) == nil {
			return next(ctx)
		}
		p, err := auth.Require(ctx)
		if err == nil {
			err = a.Recheck(ctx, p)
		}
		if err != nil {
			return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{present(ctx, err)}})
		}
		return next(ctx)
	}
}

// ConnectionCharger charges a socket's connection_init to the rate limit
// (auth.Limiter): to the user of the token it names, or to its address
// when it names none that is valid.
type ConnectionCharger interface {
	ChargeConnection(ctx context.Context, p *auth.Principal) error
}

// noCharge leaves sockets unlimited (ServerOptions without a limiter).
type noCharge struct{}

func (noCharge) ChargeConnection(context.Context, *auth.Principal) error { return nil }

// refuseFor refuses a socket whose token failed: 4403 for a token that is
// not valid, 4500 when it could not be checked.
func refuseFor(ctx context.Context, err error) (context.Context, *transport.InitPayload, error) {
	if fault.CodeOf(err) == fault.Internal {
		return refuse(ctx, closeInternal, reasonAuthError)
	}
	return refuse(ctx, closeForbidden, reasonBadToken)
}

// refuse makes gqlgen close the socket with code and reason (and, on
// graphql-ws, send reason as connection_error first).
func refuse(ctx context.Context, code int, reason string) (context.Context, *transport.InitPayload, error) {
	ctx = transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), reason)
	return ctx, nil, errors.New(reason)
}

// initToken finds the token of a connection_init payload. Clients put it
// in different places: {"Authorization": "Bearer …"} (graphql-ws's own
// examples), "authorization" or "token", or {"headers": {"Authorization":
// …}} (Apollo Client's habit). The scheme "Bearer " is optional. problem
// says what is wrong with a payload that cannot be read.
func initToken(payload transport.InitPayload) (token, problem string) {
	find := func(m map[string]any, where string, keys ...string) (string, string) {
		for _, k := range keys {
			v, ok := m[k]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return "", fmt.Sprintf("connection_init payload: %s%s must be a string", where, k)
			}
			if t := auth.FromHeader(s); t != "" {
				return t, ""
			}
		}
		return "", ""
	}
	if t, problem := find(payload, "", "Authorization", "authorization", "token"); t != "" || problem != "" {
		return t, problem
	}
	h, ok := payload["headers"]
	if !ok || h == nil {
		return "", ""
	}
	headers, ok := h.(map[string]any)
	if !ok {
		return "", "connection_init payload: headers must be an object"
	}
	return find(headers, "headers.", "Authorization", "authorization")
}

// gorillaImplementation adapts gorilla/websocket to gqlgen's transport.
type gorillaImplementation struct {
	initTimeout time.Duration
	sockets     *sockets // nil: a revoked token's socket closes with gqlgen's 1000
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
	c := &gorillaConn{conn: conn, ids: newOpIDs()}
	if g.sockets != nil {
		c.unlist = g.sockets.add(r.Context(), c)
	}
	// gqlgen's own init timeout closes with 1002; the protocol asks for 4408.
	c.initTimer = time.AfterFunc(g.initTimeout, func() {
		_ = c.WriteClose(closeInitTimeout, "Connection initialisation timeout")
		_ = conn.Close()
	})
	return c, nil
}

// sockets finds the connection of a request: gqlgen hands the init function
// the request's context and nothing of the connection, yet the connection
// has to learn the context its token bound, to say why it ends.
type sockets struct {
	mu    sync.Mutex
	byCtx map[context.Context]*gorillaConn
}

func (s *sockets) add(ctx context.Context, c *gorillaConn) (unlist func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byCtx == nil {
		s.byCtx = map[context.Context]*gorillaConn{}
	}
	s.byCtx[ctx] = c
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.byCtx[ctx] == c {
			delete(s.byCtx, ctx)
		}
	}
}

// bind tells the connection of the request whose context is ctx the
// context its token bound.
func (s *sockets) bind(ctx, bound context.Context) {
	if s == nil {
		return
	}
	s.mu.Lock()
	c := s.byCtx[ctx]
	s.mu.Unlock()
	if c != nil {
		c.wmu.Lock()
		c.bound = bound
		c.wmu.Unlock()
	}
}

type gorillaConn struct {
	conn      *websocket.Conn
	initTimer *time.Timer
	unlist    func()
	inited    bool // a connection_init was read; the reader's own

	wmu   sync.Mutex      // gorilla allows one writer at a time
	frame []byte          // the last result's frame, reused; wmu guards it
	bound context.Context // ends when the token is revoked; wmu guards it

	ids *opIDs // the ids of its operations, the client's and gqlgen's
}

func (c *gorillaConn) Close() error {
	c.initTimer.Stop()
	if c.unlist != nil {
		c.unlist()
	}
	return c.conn.Close()
}

// NextReader hands gqlgen the next message, once checked: gqlgen answers
// some faults of a client with a bare 1002 "unexpected message", a 1000
// "terminated" or nothing at all, where graphql-transport-ws asks for a
// code and a reason that tell the client what it did wrong.
func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	for {
		mt, r, err := c.conn.NextReader()
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
				return mt, nil, transport.ErrWebsocketClosed
			}
			return mt, nil, err
		}
		// Client messages are small (operations, pings) and bounded by
		// the read limit: each is read whole to be checked.
		msg, err := io.ReadAll(r)
		if err != nil {
			return mt, nil, err
		}
		msg, code, reason, skip := c.check(msg)
		if code != 0 {
			_ = c.WriteClose(code, reason)
			_ = c.conn.Close()
			return mt, nil, transport.ErrWebsocketClosed
		}
		if !skip {
			return mt, bytes.NewReader(msg), nil
		}
	}
}

// clientMessage is what check reads of a message.
type clientMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// check returns the message to hand gqlgen (an operation's under its id
// for gqlgen, opIDs), or the close code and reason a client message earns;
// skip is true for a message answered or settled here (a ping before the
// connection_init, which gqlgen would refuse though the protocol allows it;
// the complete of an operation that is not running).
func (c *gorillaConn) check(msg []byte) (out []byte, code int, reason string, skip bool) {
	var m clientMessage
	if err := json.Unmarshal(msg, &m); err != nil || m.Type == "" {
		return nil, closeBadRequest, `Bad request: a message must be a JSON object with a type, such as {"type":"connection_init"}`, false
	}
	legacy := c.conn.Subprotocol() != "graphql-transport-ws"
	subscribe, complete := "subscribe", "complete"
	if legacy {
		subscribe, complete = "start", "stop"
	}
	if !c.inited {
		switch {
		case m.Type == "connection_init":
			p := bytes.TrimSpace(m.Payload)
			if len(p) != 0 && !bytes.Equal(p, []byte("null")) && p[0] != '{' {
				return nil, closeBadRequest, `Bad request: connection_init payload must be a JSON object such as {"Authorization":"Bearer <token>"}`, false
			}
			c.inited = true
			c.initTimer.Stop()
			return msg, 0, "", false
		case m.Type == subscribe:
			return nil, closeUnauthorized, "Unauthorized: send connection_init with a token before " + subscribe, false
		case !legacy && m.Type == "ping":
			_ = c.WriteJSON(map[string]string{"type": "pong"})
			return nil, 0, "", true
		case !legacy && m.Type == "pong":
			return nil, 0, "", true
		case legacy && m.Type == "connection_terminate":
			return msg, 0, "", false // gqlgen closes with 1000
		}
		return nil, closeBadRequest, "Bad request: the first message must be connection_init, not " + quoteType(m.Type), false
	}
	switch {
	case m.Type == "connection_init":
		return nil, closeTooManyInits, "Too many initialisation requests", false
	case m.Type == subscribe:
		if m.ID == "" {
			return nil, closeBadRequest, "Bad request: " + subscribe + " needs an id", false
		}
		if checkRequestJSON(m.Payload, MaxRequestValues, "") != nil {
			return nil, closeBadRequest, fmt.Sprintf("Bad request: an operation may hold at most %d JSON values", MaxRequestValues), false
		}
		id, running := c.ids.start(m.ID)
		if running {
			return nil, closeSubscriberIn, "Subscriber for " + m.ID + " already exists", false
		}
		return renamed(m, id), 0, "", false
	case m.Type == complete:
		id, running := c.ids.stop(m.ID)
		if !running {
			return nil, 0, "", true
		}
		return renamed(m, id), 0, "", false
	case !legacy && (m.Type == "ping" || m.Type == "pong"):
	case legacy && m.Type == "connection_terminate":
	default:
		return nil, closeBadRequest, "Bad request: unknown message type " + quoteType(m.Type), false
	}
	return msg, 0, "", false
}

// quoteType quotes a client's message type for a close reason, clipped.
func quoteType(t string) string {
	return strconv.Quote(fault.Clip(t, fault.QuoteLen))
}

func (c *gorillaConn) WriteJSON(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// A client that stops reading must not hold the writer forever.
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if frame, ok := appendResult(c.frame[:0], v, c.ids.clientID); ok {
		c.frame = nil
		if cap(frame) <= maxKeptFrame {
			c.frame = frame
		}
		return c.conn.WriteMessage(websocket.TextMessage, frame)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// The client's id in place of gqlgen's; the end of an operation frees
	// it for the client to use again.
	var m clientMessage
	if json.Unmarshal(b, &m) == nil && m.ID != "" {
		b = renamed(m, c.ids.client(m.ID, m.Type == "complete" || m.Type == "error"))
	}
	return c.conn.WriteMessage(websocket.TextMessage, b)
}

// WriteClose closes the socket with code and reason. gqlgen ends the
// socket of a revoked token as any other, with 1000 "terminated": that
// one says why instead.
func (c *gorillaConn) WriteClose(code int, reason string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if code == websocket.CloseNormalClosure && c.bound != nil && errors.Is(context.Cause(c.bound), auth.ErrTokenGone) {
		code, reason = closeForbidden, reasonRevoked
	}
	return c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, fault.Clip(reason, maxCloseReason-len("…"))), time.Now().Add(time.Second))
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
