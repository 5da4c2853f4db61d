package sandbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Remote is the control surface of a network running as its own process
// (`wagraph sandbox-network`), reached over its control API.
type Remote struct {
	base string // http://<control address>
	addr string // where the network itself listens
	http *http.Client
	log  *slog.Logger
}

// Dial asks the control API at controlAddr (host:port on loopback) where
// the network listens and which root certifies it, and makes this
// process's whatsmeow clients trust that root (wafake.TrustRoot: a process
// trusts one root for good, so it fails if another was trusted before).
func Dial(ctx context.Context, controlAddr string, log *slog.Logger) (*Remote, error) {
	if !isLoopback(controlAddr) {
		return nil, fmt.Errorf("sandbox: %q is not a loopback address; the sandbox control API only listens on loopback", controlAddr)
	}
	r := &Remote{base: "http://" + controlAddr, http: &http.Client{}, log: orDiscard(log)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+pathNetwork, nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control address %q: %w", controlAddr, err)
	}
	var info networkInfo
	if err := r.do(req, &info); err != nil {
		return nil, fmt.Errorf("sandbox: ask the network at %s: %w", controlAddr, err)
	}
	key, err := hex.DecodeString(info.RootPublicKey)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("sandbox: the network at %s answered a root key that is not 32 bytes of hex", controlAddr)
	}
	if !isLoopback(info.Addr) {
		return nil, fmt.Errorf("sandbox: the network at %s says it listens on %q, which is not loopback", controlAddr, info.Addr)
	}
	if err := wafake.TrustRoot([32]byte(key)); err != nil {
		return nil, fmt.Errorf("sandbox: trust the network at %s: %w", controlAddr, err)
	}
	r.addr = info.Addr
	r.log.Info("sandbox: using a separate simulated network", "control_addr", controlAddr, "addr", r.addr)
	return r, nil
}

// Point makes cli connect to the remote network instead of WhatsApp.
func (r *Remote) Point(cli *whatsmeow.Client) { wafake.PointAt(cli, r.addr) }

// Transport is an HTTP transport to the remote network instead of
// WhatsApp, for whatsapp.ManagerOptions.Transport.
func (r *Remote) Transport() *http.Transport { return wafake.TransportTo(r.addr) }

// Close releases the idle connections to the control API; the network
// keeps running.
func (r *Remote) Close() error {
	r.http.CloseIdleConnections()
	return nil
}

// LinkDevice is Local.LinkDevice on the remote network.
func (r *Remote) LinkDevice(ctx context.Context, qrCode, phone string) error {
	if err := checkAccount("phone", phone); err != nil {
		return err
	}
	if err := checkQR(qrCode); err != nil {
		return err
	}
	return r.call(ctx, pathLinkDevice, linkReq{QRCode: qrCode, Phone: phone}, nil)
}

// EnterPairingCode is Local.EnterPairingCode on the remote network.
func (r *Remote) EnterPairingCode(ctx context.Context, phone, code string) error {
	if err := checkAccount("phone", phone); err != nil {
		return err
	}
	if err := checkPairingCode(code); err != nil {
		return err
	}
	return r.call(ctx, pathEnterPairingCode, pairingCodeReq{Phone: phone, Code: code}, nil)
}

// Inbox is Local.Inbox on the remote network.
func (r *Remote) Inbox(ctx context.Context, phone string) ([]Message, error) {
	if err := checkAccount("phone", phone); err != nil {
		return nil, err
	}
	var out []Message
	if err := r.call(ctx, pathInbox, phoneReq{Phone: phone}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Media is Local.Media on the remote network.
func (r *Remote) Media(ctx context.Context, phone, messageID string) ([]byte, error) {
	if err := checkAccount("phone", phone); err != nil {
		return nil, err
	}
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	var out []byte
	if err := r.call(ctx, pathMedia, mediaReq{Phone: phone, MessageID: messageID}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// SendText is Local.SendText on the remote network.
func (r *Remote) SendText(ctx context.Context, from, to, text string) (string, error) {
	if err := checkSend(from, to); err != nil {
		return "", err
	}
	if err := checkText(text); err != nil {
		return "", err
	}
	var out idResp
	err := r.call(ctx, pathSendText, sendTextReq{From: from, To: to, Text: text}, &out)
	return out.ID, err
}

// SendImage is Local.SendImage on the remote network.
func (r *Remote) SendImage(ctx context.Context, from, to string, data []byte, mimetype, caption string) (string, error) {
	if err := checkSend(from, to); err != nil {
		return "", err
	}
	if err := checkImage(data, mimetype); err != nil {
		return "", err
	}
	var out idResp
	err := r.call(ctx, pathSendImage, sendImageReq{From: from, To: to, Image: data, Mimetype: mimetype, Caption: caption}, &out)
	return out.ID, err
}

// React is Local.React on the remote network.
func (r *Remote) React(ctx context.Context, from, to, messageID, emoji string) error {
	if err := checkSend(from, to); err != nil {
		return err
	}
	if err := checkMessageID(messageID); err != nil {
		return err
	}
	if err := checkEmoji(emoji); err != nil {
		return err
	}
	return r.call(ctx, pathReact, reactReq{From: from, To: to, MessageID: messageID, Emoji: emoji}, nil)
}

// Receipt is Local.Receipt on the remote network.
func (r *Remote) Receipt(ctx context.Context, from, to, messageID, typ string) error {
	if err := checkSend(from, to); err != nil {
		return err
	}
	if err := checkMessageID(messageID); err != nil {
		return err
	}
	if err := checkReceiptType(typ); err != nil {
		return err
	}
	return r.call(ctx, pathReceipt, receiptReq{From: from, To: to, MessageID: messageID, Type: typ}, nil)
}

// Presence is Local.Presence on the remote network.
func (r *Remote) Presence(ctx context.Context, from, to, state string) error {
	if err := checkSend(from, to); err != nil {
		return err
	}
	if err := checkPresenceState(state); err != nil {
		return err
	}
	return r.call(ctx, pathPresence, presenceReq{From: from, To: to, State: state}, nil)
}

// Group is Local.Group on the remote network.
func (r *Remote) Group(ctx context.Context, jid string) (*Group, error) {
	if _, err := parseGroup("jid", jid); err != nil {
		return nil, err
	}
	var out *Group
	if err := r.call(ctx, pathGroup, groupReq{JID: jid}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Account is Local.Account on the remote network.
func (r *Remote) Account(ctx context.Context, phone string) (*Account, error) {
	if err := checkPhone("phone", phone); err != nil {
		return nil, err
	}
	var out *Account
	if err := r.call(ctx, pathAccount, phoneReq{Phone: phone}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DropConnection is Local.DropConnection on the remote network.
func (r *Remote) DropConnection(ctx context.Context, device string) error {
	if _, err := parseDevice("device", device); err != nil {
		return err
	}
	return r.call(ctx, pathDropConnection, deviceReq{Device: device}, nil)
}

// RemoveDevice is Local.RemoveDevice on the remote network.
func (r *Remote) RemoveDevice(ctx context.Context, device string) error {
	if _, err := parseDevice("device", device); err != nil {
		return err
	}
	return r.call(ctx, pathRemoveDevice, deviceReq{Device: device}, nil)
}

// checkSend runs the checks of a simulated phone writing to a user, in the
// order Local runs them.
func checkSend(from, to string) error {
	if err := checkAccount("from", from); err != nil {
		return err
	}
	_, err := parseUser("to", to)
	return err
}

// call POSTs one operation and decodes its result into out (nil: ignore).
func (r *Remote) call(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("sandbox: encode %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if out == nil {
		out = &done{}
	}
	return r.do(req, out)
}

// do sends req and decodes a 200 answer into out; an error answer becomes
// the fault it carries, so a Remote fails as a Local would.
func (r *Remote) do(req *http.Request, out any) error {
	resp, err := r.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return ctxErr
		}
		r.log.Warn("sandbox: the simulated network does not answer", "url", req.URL.String(), "err", err)
		return fault.New(fault.WhatsAppError, "the sandbox network at %s does not answer: is `wagraph sandbox-network` running?", req.URL.Host)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("sandbox: decode the answer of %s: %w", req.URL.Path, err)
		}
		return nil
	}
	var eb errorBody
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&eb); err != nil || eb.Error.Code == "" {
		return fmt.Errorf("sandbox: %s answered %s", req.URL.Path, resp.Status)
	}
	if eb.Error.Code == fault.Internal {
		return errors.New("sandbox: " + eb.Error.Message)
	}
	return &fault.Error{Code: eb.Error.Code, Field: eb.Error.Field, Message: eb.Error.Message}
}
