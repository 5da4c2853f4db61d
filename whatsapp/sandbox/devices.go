package sandbox

import (
	"context"
	"log/slog"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The controls of linked devices: a phone linking one (by QR code or
// pairing code), a connection dropped, a device unlinked by its phone.

// LinkDevice has the simulated phone of Phone scan QRCode, the current QR
// code of a pairing session: the session becomes a linked device of that
// account. It answers once the session confirmed the pairing (it then
// reconnects and logs in by itself). The wait is the network's own (30 s
// at most); ctx is checked before it starts.
type LinkDevice struct {
	QRCode string `json:"qrCode"`
	Phone  string `json:"phone"`
}

func (LinkDevice) control() Control[LinkDevice, Done] {
	return Control[LinkDevice, Done]{
		name: "link-device",
		check: func(q LinkDevice) error {
			return first(checkAccount("phone", q.Phone), checkQR(q.QRCode))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q LinkDevice) (Done, error) {
			return Done{}, refusal(n.ScanQR(q.QRCode, q.Phone), q.Phone)
		},
	}
}

// EnterPairingCode has the simulated phone of Phone enter Code, which a
// session got from pairPhone for that number.
type EnterPairingCode struct {
	Phone string `json:"phone"`
	Code  string `json:"code"`
}

func (EnterPairingCode) control() Control[EnterPairingCode, Done] {
	return Control[EnterPairingCode, Done]{
		name: "enter-pairing-code",
		check: func(q EnterPairingCode) error {
			return first(checkAccount("phone", q.Phone), checkPairingCode(q.Code))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q EnterPairingCode) (Done, error) {
			return Done{}, refusal(n.EnterPairingCode(q.Phone, q.Code), q.Phone)
		},
	}
}

// DropConnection closes the connection of linked device Device abruptly,
// as a network failure would; the client reconnects by itself.
type DropConnection struct {
	Device string `json:"device"`
}

func (DropConnection) control() Control[DropConnection, Done] {
	return Control[DropConnection, Done]{
		name:  "drop-connection",
		check: func(q DropConnection) error { return checkDevice("device", q.Device) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q DropConnection) (Done, error) {
			return Done{}, refusal(n.DropConnection(checked(q.Device)), q.Device)
		},
	}
}

// RemoveDevice is the phone unlinking linked device Device: the session is
// logged out, now if online, else at its next login.
type RemoveDevice struct {
	Device string `json:"device"`
}

func (RemoveDevice) control() Control[RemoveDevice, Done] {
	return Control[RemoveDevice, Done]{
		name:  "remove-device",
		check: func(q RemoveDevice) error { return checkDevice("device", q.Device) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q RemoveDevice) (Done, error) {
			return Done{}, refusal(n.RemoveDevice(checked(q.Device)), q.Device)
		},
	}
}
