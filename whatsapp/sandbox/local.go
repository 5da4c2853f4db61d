package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow"

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
func (l *Local) Transport() *wafake.Redirect { return l.net.Transport() }

// Close stops the network (when NewLocal started it) and waits for its
// goroutines.
func (l *Local) Close() error {
	if !l.own {
		return nil
	}
	return l.net.Close()
}

// call runs c on the network here; ctx is checked before, as a control
// may wait for a client (pairing) or start what it cannot take back (a
// burst).
func (l *Local) call(ctx context.Context, c op, req, res any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.exec(ctx, l.net, l.log, req, res)
}

// Running is a simulated network this process uses: its controls, the
// transport the session manager's clients reach it through, its web pages
// (the version lookup), and what closes it.
type Running interface {
	Network
	Transport() *wafake.Redirect
	HTTPClient() *http.Client
	Close() error
}

// Open starts the in-process network, which keeps its world in stateDir
// (beside the sessions' device store, so the sessions linked to it come
// back after a restart), or, with remote set (--sandbox-network), reaches
// the network of another process at that address.
func Open(ctx context.Context, log *slog.Logger, remote, stateDir string) (Running, error) {
	if remote != "" {
		r, err := Dial(ctx, remote, log)
		if err != nil {
			return nil, fmt.Errorf("--sandbox-network %s: %w", remote, err)
		}
		return r, nil
	}
	l, err := OpenLocal(log, stateDir)
	if err != nil {
		return nil, fmt.Errorf("start the simulated network: %w", err)
	}
	return l, nil
}
