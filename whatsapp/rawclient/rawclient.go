// Package rawclient is whatsmeow clients linked straight to a sandbox
// network, with no gateway: the load program's references. For sends
// (issue 11, goal 2) a Client does what a gateway send does at the
// protocol level — SendMessage of a text, Upload then SendMessage of an
// image — and nothing else: no recipient check, no message store, no
// events. For receiving (issue 35, goal 2) a receiver (LinkReceiver) takes
// messages as a gateway's session does at the protocol level — decrypted
// in whatsmeow's store transaction, buffered, their secrets kept,
// acknowledged once its handler returns — and only hands their texts on.
package rawclient

import (
	"context"
	"errors"
	"fmt"

	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Network is the sandbox network the clients link to: sandbox.Local or
// sandbox.Remote.
type Network interface {
	sandbox.Network
	// Transport reaches the network's addresses.
	Transport() *wafake.Redirect
}

// Store holds the device stores of the clients and the HTTP they share.
// Both are what the gateway's manager gives its own clients
// (whatsapp.OpenStore, whatsapp.ClientHTTP: the same SQLite settings, one
// transport, websockets without compression), so that a difference in the
// send benchmark is the gateway's own work, not a setting.
type Store struct {
	c    *sqlstore.Container
	http whatsapp.ClientHTTP
	net  Network
}

// OpenStore opens (creating) the device store in the SQLite file at path,
// for clients of net.
func OpenStore(ctx context.Context, path string, net Network) (*Store, error) {
	c, err := whatsapp.OpenStore(ctx, path, nil)
	if err != nil {
		return nil, fmt.Errorf("rawclient: %w", err)
	}
	return &Store{c: c, http: whatsapp.NewClientHTTP(net.Transport()), net: net}, nil
}

// Close closes the store; close the clients first.
func (s *Store) Close() error { return s.c.Close() }

// Client is one linked device of a network account.
type Client struct {
	cli *whatsmeow.Client
}

// linkTimeout bounds pairing: 50 clients pairing at once on two cores
// each generate and store 812 prekeys.
const linkTimeout = 2 * time.Minute

// Link makes a new device in st, connects it to st's network and has the
// phone of the account phone scan its QR code; it returns once the device
// is paired and logged in.
func Link(ctx context.Context, st *Store, phone string) (*Client, error) {
	return link(ctx, st, phone, nil)
}

// Text is a text a receiver got: its message id, its chat and sender, and
// what it says.
type Text struct {
	ID           string
	Chat, Sender types.JID
	Text         string
}

// LinkReceiver is Link for a device that receives: it takes messages with
// the settings of the gateway's sessions (whatsapp.Manager's start) that
// shape the receive path — SynchronousAck (a message is acknowledged once
// the handlers have run) and EnableDecryptedEventBuffer (the plaintext
// buffered in the store's decryption transaction, cleared after the
// handlers) — and calls onText, in whatsmeow's handler goroutine before
// the acknowledgement, for every text message it decrypts.
func LinkReceiver(ctx context.Context, st *Store, phone string, onText func(Text)) (*Client, error) {
	return link(ctx, st, phone, func(cli *whatsmeow.Client) {
		cli.SynchronousAck = true
		cli.EnableDecryptedEventBuffer = true
		cli.AddEventHandler(func(evt any) {
			m, ok := evt.(*events.Message)
			if !ok {
				return
			}
			text := m.Message.GetConversation()
			if text == "" {
				text = m.Message.GetExtendedTextMessage().GetText()
			}
			if text != "" {
				onText(Text{ID: m.Info.ID, Chat: m.Info.Chat, Sender: m.Info.Sender, Text: text})
			}
		})
	})
}

// link makes, links and logs in a device; configure, when set, sets the
// client up before it connects.
func link(ctx context.Context, st *Store, phone string, configure func(*whatsmeow.Client)) (*Client, error) {
	ctx, cancel := context.WithTimeout(ctx, linkTimeout)
	defer cancel()
	cli := whatsmeow.NewClient(st.c.NewDevice(), waLog.Noop)
	st.http.Use(cli)
	if configure != nil {
		configure(cli)
	}
	var once sync.Once
	connected := make(chan struct{})
	cli.AddEventHandler(func(evt any) {
		if _, ok := evt.(*events.Connected); ok {
			once.Do(func() { close(connected) })
		}
	})
	qr, err := cli.GetQRChannel(ctx)
	if err != nil {
		return nil, fmt.Errorf("rawclient: %s: QR channel: %w", phone, err)
	}
	if err := cli.Connect(); err != nil {
		return nil, fmt.Errorf("rawclient: %s: connect: %w", phone, err)
	}
	c := &Client{cli: cli}
	fail := func(err error) (*Client, error) {
		c.Close()
		return nil, fmt.Errorf("rawclient: %s: %w", phone, err)
	}
	var code string
	select {
	case item := <-qr:
		if item.Event != "code" {
			return fail(fmt.Errorf("QR event %q (%v), want a code", item.Event, item.Error))
		}
		code = item.Code
	case <-ctx.Done():
		return fail(fmt.Errorf("no QR code: %w", ctx.Err()))
	}
	if _, err := sandbox.Do(ctx, st.net, sandbox.LinkDevice{QRCode: code, Phone: phone}); err != nil {
		return fail(fmt.Errorf("link: %w", err))
	}
	select {
	case <-connected:
	case <-ctx.Done():
		return fail(fmt.Errorf("not logged in after pairing: %w", ctx.Err()))
	}
	if cli.Store.ID == nil {
		return fail(errors.New("logged in without a device id"))
	}
	return c, nil
}

// MessageSecret is the secret whatsmeow's store keeps for message id of
// sender in chat (messageContextInfo.messageSecret of a message received);
// nil when it keeps none.
func (c *Client) MessageSecret(ctx context.Context, chat, sender types.JID, id string) ([]byte, error) {
	secret, _, err := c.cli.Store.MsgSecrets.GetMessageSecret(ctx, chat, sender, id)
	if err != nil {
		return nil, fmt.Errorf("rawclient: message secret of %s: %w", id, err)
	}
	return secret, nil
}

// Close disconnects the client.
func (c *Client) Close() { c.cli.Disconnect() }

// ID is the device's JID.
func (c *Client) ID() types.JID {
	if c.cli.Store.ID == nil {
		return types.EmptyJID
	}
	return *c.cli.Store.ID
}

// SendText sends text to the user of phone number to and returns the
// message id WhatsApp acknowledged.
func (c *Client) SendText(ctx context.Context, to, text string) (string, error) {
	return c.send(ctx, to, &waE2E.Message{Conversation: proto.String(text)})
}

// Image is an image to send: its bytes and what the message says of them.
type Image struct {
	Data          []byte
	Mimetype      string
	Thumbnail     []byte // JPEG or nil
	Width, Height uint32
}

// SendImage uploads img and sends it to the user of phone number to, as
// the gateway builds an image message.
func (c *Client) SendImage(ctx context.Context, to string, img Image, caption string) (string, error) {
	up, err := c.cli.Upload(ctx, img.Data, whatsmeow.MediaImage)
	if err != nil {
		return "", fmt.Errorf("rawclient: upload the image: %w", err)
	}
	msg := &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
		MediaKeyTimestamp: proto.Int64(time.Now().Unix()), Mimetype: proto.String(img.Mimetype),
		JPEGThumbnail: img.Thumbnail, Width: nonZero(img.Width), Height: nonZero(img.Height),
	}}
	if caption != "" {
		msg.ImageMessage.Caption = proto.String(caption)
	}
	return c.send(ctx, to, msg)
}

func (c *Client) send(ctx context.Context, to string, msg *waE2E.Message) (string, error) {
	resp, err := c.cli.SendMessage(ctx, types.NewJID(to, types.DefaultUserServer), msg)
	if err != nil {
		return "", fmt.Errorf("rawclient: send to %s: %w", to, err)
	}
	return resp.ID, nil
}

func nonZero(n uint32) *uint32 {
	if n == 0 {
		return nil
	}
	return proto.Uint32(n)
}
