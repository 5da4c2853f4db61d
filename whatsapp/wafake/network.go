package wafake

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// Options configure a Network.
type Options struct {
	// Logger receives the network's own log; nil discards it.
	Logger *slog.Logger
	// Addr is the listen address; it must be on loopback. Empty: a free
	// port on 127.0.0.1.
	Addr string
	// Root certifies the network's server key. Nil: the shared in-process
	// root, which New makes this process trust.
	Root *keys.KeyPair
	// StateDir, when set, is where the network keeps its world across
	// restarts (persist.go): New loads what an earlier network left there,
	// changes are written a moment after they happen, and Close writes the
	// last. Empty: the world lives in memory only.
	StateDir string
	// PasskeyTimeout is how long a passkey challenge stays valid (0:
	// DefaultPasskeyTimeout).
	PasskeyTimeout time.Duration
}

// Network is a simulated WhatsApp: a server on loopback that whatsmeow
// clients connect to, and the world of accounts behind it.
type Network struct {
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	static *keys.KeyPair
	root   *keys.KeyPair
	ids    atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu             changeMutex // its unlocks count the changes persist.go saves
	conns          map[*conn]struct{}
	accounts       map[string]*account
	lidSeq         uint64
	pairing        map[string]*conn // QR reference → the client showing it
	pending        map[string]pendingIQ
	codeRegs       map[string]*codeReg    // paircode.go: pairing-code reference → the waiting client, under mu
	passkeys       map[*conn]*passkeyStep // passkey.go: clients in the passkey step, under mu
	passkeyTimeout time.Duration
	counts         connCounts // connections.go: logged-in connections by device, under mu

	media   mediaStore  // media.go: uploaded blobs, with their own lock
	groups  groupState  // groups.go: groups and pictures, under mu
	version versionGate // version.go: the minimum client version, with its own lock
	polls   pollState   // polls.go: the secrets of the phones' polls, with their own lock
	retries retryState  // mediaretry.go: the media the phones sent, with its own lock

	stateDir string // persist.go: "" when the world is not kept
}

// pendingIQ waits for a client's answer to an IQ the network sent.
type pendingIQ struct {
	c  *conn
	fn func(*waBinary.Node)
}

// New starts a network listening on a loopback port. Close stops it.
func New(opts Options) (*Network, error) {
	root := opts.Root
	if root == nil {
		root = defaultRoot
		if err := TrustRoot(*root.Pub); err != nil {
			return nil, err
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Network{
		log: log, ln: ln, static: keys.NewKeyPair(), root: root,
		ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{},
		accounts: map[string]*account{}, pairing: map[string]*conn{}, pending: map[string]pendingIQ{},
		counts: connCounts{}, stateDir: opts.StateDir,
		passkeys: map[*conn]*passkeyStep{}, passkeyTimeout: opts.PasskeyTimeout,
	}
	if n.passkeyTimeout <= 0 {
		n.passkeyTimeout = DefaultPasskeyTimeout
	}
	n.media.gen = &n.mu.gen
	if err := n.loadState(); err != nil {
		cancel()
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	n.routes(mux)
	n.srv = &http.Server{Handler: mux, BaseContext: func(net.Listener) context.Context { return ctx }}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("wafake: serve", "err", err)
		}
	}()
	if n.stateDir != "" {
		n.wg.Add(1)
		go n.keepState()
	}
	return n, nil
}

// Addr is the network's loopback address.
func (n *Network) Addr() string { return n.ln.Addr().String() }

// Close drops every connection and stops the server; it returns when all of
// the network's goroutines have ended, and, with a state directory, once
// the world is written there.
func (n *Network) Close() error {
	n.cancel()
	err := n.srv.Close()
	n.mu.Lock()
	for c := range n.conns {
		c.close()
	}
	n.mu.Unlock()
	n.wg.Wait()
	if n.stateDir != "" {
		if serr := n.saveState(); serr != nil {
			err = errors.Join(err, serr)
		}
		n.collectMedia()
	}
	return err
}

// HTTPClient returns an HTTP client whose every connection, whatever host it
// names, goes to the network.
func (n *Network) HTTPClient() *http.Client { return redirectedClient(n.Addr()) }

// ClientFor is HTTPClient for a network listening at addr, such as one
// running as its own process.
func ClientFor(addr string) *http.Client { return redirectedClient(addr) }

// redirectedClient sends every connection to addr. Connections are plain
// TCP: returning them from DialTLSContext makes net/http treat them as
// already secured, so wss:// and https:// URLs of WhatsApp's hosts work.
func redirectedClient(addr string) *http.Client {
	return &http.Client{Transport: redirectedVia(addr, (&net.Dialer{}).DialContext)}
}

// redirectedVia is a transport whose every connection, plain or TLS, is a
// plain TCP connection to addr that dial opens.
func redirectedVia(addr string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	to := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dial(ctx, "tcp", addr)
	}
	return &http.Transport{DialContext: to, DialTLSContext: to, ForceAttemptHTTP2: false}
}

// Redirect is the transport of ClientFor(addr): every connection, plain or
// TLS, goes to a network listening at addr in plain TCP.
type Redirect struct {
	*http.Transport
	addr string
}

// Through is a copy of the transport whose connections dial opens, to the
// network's address: a client that reaches the network through a proxy
// (a session of the whatsapp manager with a proxy) has the proxy connect
// there.
func (r *Redirect) Through(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	return redirectedVia(r.addr, dial)
}

// TransportTo is the transport of ClientFor(addr). For a program that sets
// up its clients' HTTP itself (Point replaces a client's).
func TransportTo(addr string) *Redirect {
	return &Redirect{Transport: redirectedClient(addr).Transport.(*http.Transport), addr: addr}
}

// Transport is TransportTo the network's address.
func (n *Network) Transport() *Redirect { return TransportTo(n.Addr()) }

// Point makes cli connect to the network instead of WhatsApp. Call it before
// cli.Connect, and never call cli.SetProxy afterwards (it would replace the
// redirected transports).
func (n *Network) Point(cli *whatsmeow.Client) { PointAt(cli, n.Addr()) }

// PointAt makes cli connect to a network listening at addr, such as one
// running as its own process (see RootFile).
func PointAt(cli *whatsmeow.Client, addr string) {
	cli.SetWebsocketHTTPClient(redirectedClient(addr))
	cli.SetPreLoginHTTPClient(redirectedClient(addr))
	cli.SetMediaHTTPClient(redirectedClient(addr))
}

func (n *Network) nextID() string {
	return "wafake-" + strconv.FormatUint(n.ids.Add(1), 10)
}

func (n *Network) serveChat(w http.ResponseWriter, r *http.Request) {
	// whatsmeow offers permessage-deflate with context takeover
	// (socket/dialopts.go); accept it as WhatsApp's server does, so the
	// client's compressed path is the one under test.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionContextTakeover})
	if err != nil {
		return
	}
	ws.SetReadLimit(16 << 20)
	ctx, cancel := context.WithCancel(n.ctx)
	c := &conn{net: n, ws: ws, log: n.log, ctx: ctx, cancel: cancel}
	n.mu.Lock()
	if n.ctx.Err() != nil {
		n.mu.Unlock()
		c.close()
		return
	}
	n.conns[c] = struct{}{}
	n.wg.Add(1)
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.conns, c)
		for ref, pc := range n.pairing {
			if pc == c {
				delete(n.pairing, ref)
			}
		}
		for id, p := range n.pending {
			if p.c == c {
				delete(n.pending, id)
			}
		}
		if c.dev != nil {
			// Set by an accepted login only, which counted the connection.
			n.counts.closedLocked(c.dev.jid().String())
			if c.dev.loggedIn == c {
				c.dev.loggedIn = nil
			}
		}
		n.mu.Unlock()
		c.close()
		n.wg.Done()
	}()
	if err := c.serverHandshake(); err != nil {
		n.log.Debug("wafake: handshake failed", "err", err)
		return
	}
	if n.refuseOutdated(c) {
		return
	}
	if c.payload.Username == nil {
		if err := n.startPairing(c); err != nil {
			n.log.Debug("wafake: start pairing", "err", err)
			return
		}
	} else if !n.login(c) {
		return
	} else {
		n.afterLogin(c)
	}
	for {
		node, err := c.readNode()
		if err != nil {
			return
		}
		n.handle(c, node)
	}
}

// handle dispatches one node from a client.
func (n *Network) handle(c *conn, node *waBinary.Node) {
	if h := n.stanzaHandler(node.Tag); h != nil {
		h(c, node)
	}
}

// expect registers fn for the client's answer to the IQ id.
func (n *Network) expect(c *conn, id string, fn func(*waBinary.Node)) {
	n.mu.Lock()
	n.pending[id] = pendingIQ{c: c, fn: fn}
	n.mu.Unlock()
}

func (n *Network) handleIQ(c *conn, node *waBinary.Node) {
	ag := node.AttrGetter()
	typ, id := ag.String("type"), ag.String("id")
	if typ == "result" || typ == "error" {
		n.mu.Lock()
		p, ok := n.pending[id]
		delete(n.pending, id)
		n.mu.Unlock()
		if ok && p.c == c {
			// The answer's handler may send and wait: never block the read
			// loop. The reader holds a count on n.wg, so Close waits for it.
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				p.fn(node)
			}()
		}
		return
	}
	reply := waBinary.Node{Tag: "iq", Attrs: waBinary.Attrs{"id": id, "type": "result", "from": types.ServerJID}}
	xmlns := ag.OptionalString("xmlns")
	if h := n.iqHandler(xmlns); h != nil {
		var content []waBinary.Node
		var iqErr *iqError
		if c.dev == nil && !beforeLogin(xmlns) {
			iqErr = &iqError{401, "not-authorized"}
		} else {
			content, iqErr = h(c, node)
		}
		if iqErr != nil {
			reply.Attrs["type"] = "error"
			content = []waBinary.Node{{Tag: "error", Attrs: waBinary.Attrs{"code": strconv.Itoa(iqErr.code), "text": iqErr.text}}}
		}
		reply.Content = content
	}
	// Every IQ gets an answer with its id: whatsmeow waits 75 s for one.
	_ = c.send(reply)
}

// startPairing offers a new (unregistered) client QR references; the client
// shows them as QR codes.
func (n *Network) startPairing(c *conn) error {
	refs := make([]waBinary.Node, 6)
	n.mu.Lock()
	for i := range refs {
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		ref := "2@" + base64.StdEncoding.EncodeToString(b)
		n.pairing[ref] = c
		refs[i] = waBinary.Node{Tag: "ref", Content: []byte(ref)}
	}
	n.mu.Unlock()
	return c.send(waBinary.Node{
		Tag:     "iq",
		Attrs:   waBinary.Attrs{"id": n.nextID(), "type": "set", "xmlns": "md", "from": types.ServerJID},
		Content: []waBinary.Node{{Tag: "pair-device", Content: refs}},
	})
}

// Unacked is how many stanzas the network holds for a linked device because
// it has not acknowledged them yet.
func (n *Network) Unacked(device types.JID) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c := n.companionLocked(device.User, device.Device); c != nil {
		return len(c.unacked)
	}
	return 0
}

// checkLoopback refuses any listen address off loopback: the network is a
// test and sandbox tool, never a server for others.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("wafake: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("wafake: %q is not a loopback address; the simulated network only listens on loopback (127.0.0.1, ::1)", addr)
	}
	return nil
}

// Idle is how long the device's connection has sent nothing (a day when it
// is not connected). Tests wait for a quiet client before disconnecting it:
// whatsmeow races a send still in flight with its own Disconnect.
func (n *Network) Idle(device types.JID) time.Duration {
	n.mu.Lock()
	var c *conn
	if comp := n.companionLocked(device.User, device.Device); comp != nil {
		c = comp.loggedIn
	}
	n.mu.Unlock()
	if c == nil {
		return 24 * time.Hour
	}
	return time.Since(time.Unix(0, c.lastRead.Load()))
}
