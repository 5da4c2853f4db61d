package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// RootFileName is where a sandbox network publishes its address and root
// key, in the data directory the server reads.
const RootFileName = "sandbox-network.json"

// sandboxNetwork runs the simulated WhatsApp network as its own process, so
// a server can be stopped, crashed or measured apart from it.
func sandboxNetwork(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("wagraph sandbox-network", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:7780", "listen address (loopback only)")
	dataDir := fs.String("data-dir", "./data", "where "+RootFileName+" (address and root key) is written for the server")
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
	if err := os.MkdirAll(*dataDir, 0o700); err != nil {
		fmt.Fprintln(stderr, "wagraph: --data-dir:", err)
		return 1
	}
	path := filepath.Join(*dataDir, RootFileName)
	if err := n.WriteRootFile(path); err != nil {
		fmt.Fprintln(stderr, "wagraph: write", path+":", err)
		return 1
	}
	log.Info("sandbox network listening: simulated WhatsApp, not the real one", "addr", n.Addr(), "root_file", path)
	<-ctx.Done()
	log.Info("sandbox network stopping")
	return 0
}
