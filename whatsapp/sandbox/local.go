package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Local is the control surface of a network in this process.
type Local struct {
	net *wafake.Network
	log *slog.Logger
	own bool // Close closes the network
}

// NewLocal starts an in-process simulated network on a free loopback port
// and makes this process's whatsmeow clients trust it (wafake's shared
// in-process root). Close stops it.
func NewLocal(log *slog.Logger) (*Local, error) {
	log = orDiscard(log)
	n, err := wafake.New(wafake.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("sandbox: start the simulated network: %w", err)
	}
	return &Local{net: n, log: log, own: true}, nil
}

// StateDirName is the directory, in a server's data directory, where the
// in-process network of `wagraph serve --sandbox` keeps its world.
const StateDirName = "sandbox"

// OpenLocal is NewLocal for a network that keeps its world in stateDir
// (wafake.Options.StateDir): accounts, linked devices, groups, inboxes
// and media survive a restart, so the sessions linked to it reconnect
// without linking again. Close writes the world's last state.
func OpenLocal(log *slog.Logger, stateDir string) (*Local, error) {
	log = orDiscard(log)
	n, err := wafake.New(wafake.Options{Logger: log, StateDir: stateDir})
	if err != nil {
		return nil, fmt.Errorf("sandbox: start the simulated network: %w", err)
	}
	return &Local{net: n, log: log, own: true}, nil
}

// over is the control surface of a network someone else owns (Handler).
func over(n *wafake.Network, log *slog.Logger) *Local {
	return &Local{net: n, log: orDiscard(log)}
}

func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// Network is the simulated network itself, for Go tests that need more than
// the sandbox controls.
func (l *Local) Network() *wafake.Network { return l.net }

// Point makes cli connect to this network instead of WhatsApp.
func (l *Local) Point(cli *whatsmeow.Client) { l.net.Point(cli) }

// Transport is an HTTP transport to this network instead of WhatsApp, for
// whatsapp.ManagerOptions.Transport.
func (l *Local) Transport() *http.Transport { return l.net.Transport() }

// Close stops the network (when NewLocal started it) and waits for its
// goroutines.
func (l *Local) Close() error {
	if !l.own {
		return nil
	}
	return l.net.Close()
}

// LinkDevice has the simulated phone of phone scan qrCode, the current QR
// code of a pairing session: the session becomes a linked device of that
// account. It returns once the session confirmed the pairing (it then
// reconnects and logs in by itself). The wait is the network's own (30 s at
// most); ctx is checked before it starts.
func (l *Local) LinkDevice(ctx context.Context, qrCode, phone string) error {
	if err := checkAccount("phone", phone); err != nil {
		return err
	}
	if err := checkQR(qrCode); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return refusal(l.net.ScanQR(qrCode, phone), phone)
}

// EnterPairingCode has the simulated phone of phone enter code, which a
// session got from pairPhone for that number.
func (l *Local) EnterPairingCode(ctx context.Context, phone, code string) error {
	if err := checkAccount("phone", phone); err != nil {
		return err
	}
	if err := checkPairingCode(code); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return refusal(l.net.EnterPairingCode(phone, code), phone)
}

// Inbox is every message the phone of phone received, oldest first, as it
// decrypted them; a revoked message is marked Revoked.
func (l *Local) Inbox(ctx context.Context, phone string) ([]Message, error) {
	if err := checkAccount("phone", phone); err != nil {
		return nil, err
	}
	return inboxOf(l.net, l.log, phone, l.net.Inbox(phone)), nil
}

// Media is the decrypted attachment of message messageID that the phone of
// phone received.
func (l *Local) Media(ctx context.Context, phone, messageID string) ([]byte, error) {
	if err := checkAccount("phone", phone); err != nil {
		return nil, err
	}
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	for _, r := range l.net.Inbox(phone) {
		if r.ID != messageID || r.From.User == phone {
			continue
		}
		data, err := l.net.MediaOf(r.Message)
		if err != nil {
			l.log.Debug("sandbox: no readable attachment", "message", messageID, "err", err)
			return nil, fault.New(fault.NotFound, "message %s has no attachment the phone can read", messageID)
		}
		return data, nil
	}
	return nil, fault.New(fault.NotFound, "%s received no message %s", phone, messageID)
}

// SendText has the simulated phone of from send text to to, a user JID;
// every linked device of that account gets it. It returns the message id.
func (l *Local) SendText(ctx context.Context, from, to, text string) (string, error) {
	if err := checkAccount("from", from); err != nil {
		return "", err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return "", err
	}
	if err := checkText(text); err != nil {
		return "", err
	}
	id, err := l.net.SendText(from, dest.User, text)
	return id, refusal(err, dest.User)
}

// SendImage has the simulated phone of from send an image: uploaded to the
// network encrypted, as a phone would, then sent like SendText.
func (l *Local) SendImage(ctx context.Context, from, to string, data []byte, mimetype, caption string) (string, error) {
	if err := checkAccount("from", from); err != nil {
		return "", err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return "", err
	}
	if err := checkImage(data, mimetype); err != nil {
		return "", err
	}
	// wafake uploads before it looks for a recipient's device: look first,
	// so that a refused send leaves no orphan blob.
	if len(l.net.LinkedDevices(dest.User)) == 0 {
		return "", noDevice(dest.User)
	}
	id, err := l.net.SendImage(from, dest.User, data, mimetype, caption)
	return id, refusal(err, dest.User)
}

// React has the simulated phone of from react with emoji to message
// messageID of its chat with to.
func (l *Local) React(ctx context.Context, from, to, messageID, emoji string) error {
	if err := checkAccount("from", from); err != nil {
		return err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return err
	}
	if err := checkMessageID(messageID); err != nil {
		return err
	}
	if err := checkEmoji(emoji); err != nil {
		return err
	}
	_, err = l.net.SendReaction(from, dest.User, messageID, emoji)
	return refusal(err, dest.User)
}

// Receipt has the simulated phone of from confirm message messageID, which
// to sent it: delivered, read or played.
func (l *Local) Receipt(ctx context.Context, from, to, messageID, typ string) error {
	if err := checkAccount("from", from); err != nil {
		return err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return err
	}
	if err := checkMessageID(messageID); err != nil {
		return err
	}
	if err := checkReceiptType(typ); err != nil {
		return err
	}
	return refusal(l.net.SendReceipt(from, dest, []string{messageID}, typ), dest.User)
}

// Presence has from show state to to: available and unavailable reach the
// linked devices that subscribed to from (else a Conflict, as WhatsApp
// sends availability only to subscribers); composing and paused reach every
// online linked device of to.
func (l *Local) Presence(ctx context.Context, from, to, state string) error {
	if err := checkAccount("from", from); err != nil {
		return err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return err
	}
	if err := checkPresenceState(state); err != nil {
		return err
	}
	return refusal(l.net.SendPresence(from, dest, state), dest.User)
}

// Group is the network's view of group jid; nil when the network has no
// such group.
func (l *Local) Group(ctx context.Context, jid string) (*Group, error) {
	g, err := parseGroup("jid", jid)
	if err != nil {
		return nil, err
	}
	info, ok := l.net.Group(g)
	if !ok {
		return nil, nil
	}
	return groupOf(info), nil
}

// Account is the network's view of the account of phone; nil when phone is
// not on WhatsApp. An account nobody used yet has the defaults.
func (l *Local) Account(ctx context.Context, phone string) (*Account, error) {
	if err := checkPhone("phone", phone); err != nil {
		return nil, err
	}
	info, ok := l.net.Account(phone)
	if !ok {
		return nil, nil
	}
	return accountOf(info), nil
}

// DropConnection closes the connection of a linked device abruptly, as a
// network failure would; the client reconnects by itself.
func (l *Local) DropConnection(ctx context.Context, device string) error {
	d, err := parseDevice("device", device)
	if err != nil {
		return err
	}
	return refusal(l.net.DropConnection(d), device)
}

// RemoveDevice is the phone unlinking a linked device: the session is
// logged out, now if online, else at its next login.
func (l *Local) RemoveDevice(ctx context.Context, device string) error {
	d, err := parseDevice("device", device)
	if err != nil {
		return err
	}
	return refusal(l.net.RemoveDevice(d), device)
}
