package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.mau.fi/whatsmeow/util/keys"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// RootFileName is where a network of its own process publishes its
// address, root key and control address, in the data directory the server
// reads.
const RootFileName = "sandbox-network.json"

// NetworkOptions configure RunNetwork (`wagraph sandbox-network`).
type NetworkOptions struct {
	// Addr is the network's listen address, loopback only
	// (127.0.0.1:7780 when empty).
	Addr string
	// ControlAddr is the control API's listen address, loopback only, for
	// `wagraph serve --sandbox-network` (127.0.0.1:7781 when empty).
	ControlAddr string
	// DataDir is where RootFileName is written for the server (required).
	DataDir string
	// StateDir, when set, is where the network keeps its world and its
	// root key across restarts (wafake.Options.StateDir, wafake.StateRoot):
	// the sessions linked to it stay linked. Empty: a new world, and a new
	// root, at every start.
	StateDir string
	Logger   *slog.Logger
}

// OptionError is a NetworkOptions field RunNetwork cannot use: a usage
// error, as opposed to one met while running.
type OptionError struct {
	Option string // the field, as the flag that sets it names it: "addr", "control-addr", …
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// rootFile is wafake's root file with the control address added;
// wafake.ReadRootFile still reads it.
type rootFile struct {
	Addr        string `json:"addr"`
	RootKey     string `json:"rootPublicKey"`
	ControlAddr string `json:"controlAddr"`
}

// RunNetwork runs the simulated WhatsApp network as its own process's
// work, so a server can be stopped, crashed or measured apart from it:
// the network, its control API, and RootFileName in DataDir. It returns
// when ctx ends (nil) or the control API fails.
func RunNetwork(ctx context.Context, opts NetworkOptions) error {
	log := orDiscard(opts.Logger)
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:7780"
	}
	if opts.ControlAddr == "" {
		opts.ControlAddr = "127.0.0.1:7781"
	}
	if opts.DataDir == "" {
		return &OptionError{"data-dir", errors.New("a directory is required")}
	}
	var root *keys.KeyPair
	if opts.StateDir != "" {
		var err error
		if root, err = wafake.StateRoot(opts.StateDir); err != nil {
			return &OptionError{"state-dir", err}
		}
	} else {
		root = wafake.NewRootKey()
	}
	n, err := wafake.New(wafake.Options{Addr: opts.Addr, Root: root, Logger: log, StateDir: opts.StateDir})
	if err != nil {
		if opts.StateDir != "" {
			return &OptionError{"addr or state-dir", err}
		}
		return &OptionError{"addr", err}
	}
	defer n.Close()
	ln, err := Listen(opts.ControlAddr)
	if err != nil {
		return &OptionError{"control-addr", err}
	}
	srv := &http.Server{Handler: Handler(n, log), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		// Operations in flight may wait for a client (pairing: 30 s at
		// most); stopping does not wait that long.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		<-served
	}()

	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return &OptionError{"data-dir", err}
	}
	path := filepath.Join(opts.DataDir, RootFileName)
	if err := writeRootFile(n, ln.Addr().String(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	state := "memory only: a restart starts a new world"
	if opts.StateDir != "" {
		state = opts.StateDir
	}
	log.Info("sandbox network listening: simulated WhatsApp, not the real one",
		"addr", n.Addr(), "control_addr", ln.Addr().String(), "root_file", path, "state", state,
		"serve_with", "--sandbox-network "+ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-served:
		served <- err // for the deferred shutdown
		return fmt.Errorf("the sandbox control API stopped: %w", err)
	}
	log.Info("sandbox network stopping")
	return nil
}

// writeRootFile publishes the network's address, root key and control
// address at path. The file appears whole (written aside, then renamed): a
// server polling for it never reads half of it.
func writeRootFile(n *wafake.Network, controlAddr, path string) error {
	tmp := path + ".tmp"
	// wafake hands out its root key only through its own root file.
	if err := n.WriteRootFile(tmp); err != nil {
		return err
	}
	addr, root, err := wafake.ReadRootFile(tmp)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(rootFile{Addr: addr, RootKey: fmt.Sprintf("%x", root[:]), ControlAddr: controlAddr}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
