package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// sandboxNetworkCommand runs the simulated WhatsApp network as its own
// process (sandbox.RunNetwork), so a server can be stopped, crashed or
// measured apart from it. It holds its data directory's network lock: two
// networks would overwrite each other's root file.
func (c *cli) sandboxNetworkCommand() *cobra.Command {
	var opts sandbox.NetworkOptions
	cmd := &cobra.Command{
		Use:   "sandbox-network",
		Short: "run the simulated WhatsApp network as its own process (loopback only)",
		Long: `Run the simulated WhatsApp network as its own process, on loopback only, with the
sandbox control API a server started with --sandbox-network <control address> uses. It
writes ` + sandbox.RootFileName + ` (its addresses and root key) in its data directory; one network at
a time uses a directory. With --state-dir it keeps its world (accounts, linked devices,
groups, inboxes, media, its root key) there across restarts, so the sessions linked to
it stay linked; without, every start is a new world.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lock, err := lockDataDir(opts.DataDir, datadir.NetworkLock, "wagraph sandbox-network")
			if err != nil {
				return err
			}
			defer lock.Release()
			opts.Logger = slog.New(slog.NewTextHandler(c.stderr, nil))
			err = sandbox.RunNetwork(cmd.Context(), opts)
			var bad *sandbox.OptionError
			switch {
			case errors.As(err, &bad):
				return usageError("wagraph: --%s: %v", bad.Option, bad.Err)
			case err != nil:
				return &exitError{code: 1, msg: fmt.Sprintf("wagraph sandbox-network: %v", err)}
			}
			return nil
		},
	}
	config.TextVar(cmd.Flags(), &opts.Addr, "addr", "host:port", "127.0.0.1:7780", "listen address of the network (loopback only)")
	config.TextVar(cmd.Flags(), &opts.ControlAddr, "control-addr", "host:port", "127.0.0.1:7781", "listen address of the control API, for `wagraph serve --sandbox-network` (loopback only)")
	config.TextVar(cmd.Flags(), &opts.DataDir, "data-dir", "path", "./data", "where "+sandbox.RootFileName+" (addresses and root key) is written for the server")
	config.TextVar(cmd.Flags(), &opts.StateDir, "state-dir", "path", "", "where the network keeps its world across restarts (default: none, every start is a new world)")
	return cmd
}
