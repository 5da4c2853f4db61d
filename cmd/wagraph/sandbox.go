package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// RootFileName is where a sandbox network publishes its address and root
// key, in the data directory the server reads.
const RootFileName = "sandbox-network.json"

// sandboxRootFile is wafake's root file with the control address added;
// wafake.ReadRootFile still reads it.
type sandboxRootFile struct {
	Addr        string `json:"addr"`
	RootKey     string `json:"rootPublicKey"`
	ControlAddr string `json:"controlAddr"`
}

// sandboxNetwork runs the simulated WhatsApp network as its own process, so
// a server can be stopped, crashed or measured apart from it. Besides the
// network it serves the sandbox control API, which a server started with
// --sandbox-network <control address> uses.
func sandboxNetwork(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("wagraph sandbox-network", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:7780", "listen address of the network (loopback only)")
	controlAddr := fs.String("control-addr", "127.0.0.1:7781", "listen address of the control API, for `wagraph serve --sandbox-network` (loopback only)")
	dataDir := fs.String("data-dir", "./data", "where "+RootFileName+" (addresses and root key) is written for the server")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	n, err := wafake.New(wafake.Options{Addr: *addr, Root: wafake.NewRootKey(), Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "wagraph: --addr:", err)
		return 2
	}
	defer n.Close()
	ln, err := sandbox.Listen(*controlAddr)
	if err != nil {
		fmt.Fprintln(stderr, "wagraph: --control-addr:", err)
		return 2
	}
	srv := &http.Server{Handler: sandbox.Handler(n, log), ReadHeaderTimeout: 10 * time.Second}
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

	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		fmt.Fprintln(stderr, "wagraph: --data-dir:", err)
		return 1
	}
	path := filepath.Join(*dataDir, RootFileName)
	if err := writeRootFile(n, ln.Addr().String(), path); err != nil {
		fmt.Fprintln(stderr, "wagraph: write", path+":", err)
		return 1
	}
	log.Info("sandbox network listening: simulated WhatsApp, not the real one",
		"addr", n.Addr(), "control_addr", ln.Addr().String(), "root_file", path,
		"serve_with", "--sandbox-network "+ln.Addr().String())
	select {
	case <-ctx.Done():
	case err := <-served:
		served <- err // for the deferred shutdown
		log.Error("sandbox control API stopped", "err", err)
		return 1
	}
	log.Info("sandbox network stopping")
	return 0
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
	b, err := json.MarshalIndent(sandboxRootFile{Addr: addr, RootKey: fmt.Sprintf("%x", root[:]), ControlAddr: controlAddr}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
