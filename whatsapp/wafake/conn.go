package wafake

import (
	"bytes"
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/socket"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// conn is one client connection: the websocket, the Noise transport on top,
// and what the client said of itself in the handshake.
type conn struct {
	net *Network
	ws  *websocket.Conn
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc

	buf        []byte // frame bytes not yet consumed
	headerSeen bool

	read, write cipher.AEAD
	readN       uint32
	wmu         sync.Mutex
	writeN      uint32

	noisePub [32]byte
	payload  *waWa6.ClientPayload
	dev      *companion   // the device logged in on this connection
	lastRead atomic.Int64 // unix nanoseconds of the last stanza read
	// live is set, under Network.mu, once the replay after login has sent
	// everything queued: from then on queue sends to this connection.
	live bool
}

// nextFrame returns the next complete frame, reading websocket messages as
// needed. The client prefixes its first message with WAConnHeader and may
// split or join frames freely.
func (c *conn) nextFrame() ([]byte, error) {
	for {
		if len(c.buf) >= socket.FrameLengthSize {
			n := int(c.buf[0])<<16 | int(c.buf[1])<<8 | int(c.buf[2])
			if len(c.buf) >= socket.FrameLengthSize+n {
				f := c.buf[socket.FrameLengthSize : socket.FrameLengthSize+n]
				c.buf = c.buf[socket.FrameLengthSize+n:]
				return f, nil
			}
		}
		_, msg, err := c.ws.Read(c.ctx)
		if err != nil {
			return nil, err
		}
		if !c.headerSeen {
			if !bytes.HasPrefix(msg, socket.WAConnHeader) {
				return nil, errors.New("first message does not start with the WA header")
			}
			msg = msg[len(socket.WAConnHeader):]
			c.headerSeen = true
		}
		c.buf = append(c.buf, msg...)
	}
}

func (c *conn) sendFrame(data []byte) error {
	f := make([]byte, socket.FrameLengthSize+len(data))
	f[0], f[1], f[2] = byte(len(data)>>16), byte(len(data)>>8), byte(len(data))
	copy(f[socket.FrameLengthSize:], data)
	return c.ws.Write(c.ctx, websocket.MessageBinary, f)
}

// serverHandshake runs the server's half of the Noise XX handshake.
func (c *conn) serverHandshake() error {
	h, err := newHandshake()
	if err != nil {
		return err
	}
	frame, err := c.nextFrame()
	if err != nil {
		return fmt.Errorf("read client hello: %w", err)
	}
	var hello waWa6.HandshakeMessage
	if err := proto.Unmarshal(frame, &hello); err != nil || len(hello.GetClientHello().GetEphemeral()) != 32 {
		return fmt.Errorf("bad client hello: %v", err)
	}
	clientEph := [32]byte(hello.GetClientHello().GetEphemeral())
	h.authenticate(clientEph[:])

	eph := keys.NewKeyPair()
	h.authenticate(eph.Pub[:])
	if err := h.mix(*eph.Priv, clientEph); err != nil {
		return err
	}
	staticCT := h.encrypt(c.net.static.Pub[:])
	if err := h.mix(*c.net.static.Priv, clientEph); err != nil {
		return err
	}
	chain, err := certChain(c.net.root, c.net.static, time.Now())
	if err != nil {
		return err
	}
	certCT := h.encrypt(chain)
	out, err := proto.Marshal(&waWa6.HandshakeMessage{ServerHello: &waWa6.HandshakeMessage_ServerHello{
		Ephemeral: eph.Pub[:], Static: staticCT, Payload: certCT,
	}})
	if err != nil {
		return err
	}
	if err := c.sendFrame(out); err != nil {
		return fmt.Errorf("send server hello: %w", err)
	}

	frame, err = c.nextFrame()
	if err != nil {
		return fmt.Errorf("read client finish: %w", err)
	}
	var finish waWa6.HandshakeMessage
	if err := proto.Unmarshal(frame, &finish); err != nil {
		return fmt.Errorf("bad client finish: %w", err)
	}
	static, err := h.decrypt(finish.GetClientFinish().GetStatic())
	if err != nil || len(static) != 32 {
		return fmt.Errorf("decrypt client static: %v", err)
	}
	c.noisePub = [32]byte(static)
	if err := h.mix(*eph.Priv, c.noisePub); err != nil {
		return err
	}
	payloadBytes, err := h.decrypt(finish.GetClientFinish().GetPayload())
	if err != nil {
		return fmt.Errorf("decrypt client payload: %w", err)
	}
	c.payload = &waWa6.ClientPayload{}
	if err := proto.Unmarshal(payloadBytes, c.payload); err != nil {
		return fmt.Errorf("bad client payload: %w", err)
	}
	c.read, c.write, err = h.split()
	return err
}

// readNode returns the next node the client sent.
func (c *conn) readNode() (*waBinary.Node, error) {
	frame, err := c.nextFrame()
	if err != nil {
		return nil, err
	}
	c.lastRead.Store(time.Now().UnixNano())
	plain, err := c.read.Open(nil, iv(c.readN), frame, nil)
	c.readN++
	if err != nil {
		return nil, fmt.Errorf("decrypt frame: %w", err)
	}
	data, err := waBinary.Unpack(plain)
	if err != nil {
		return nil, fmt.Errorf("unpack frame: %w", err)
	}
	n, err := waBinary.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("decode node: %w", err)
	}
	return n, nil
}

// send writes one node to the client. Safe for concurrent use.
func (c *conn) send(n waBinary.Node) error {
	data, err := waBinary.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s: %w", n.Tag, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	ct := c.write.Seal(nil, iv(c.writeN), data, nil)
	c.writeN++
	return c.sendFrame(ct)
}

// close ends the connection with a websocket close frame.
func (c *conn) close() {
	c.cancel()
	_ = c.ws.CloseNow()
}
