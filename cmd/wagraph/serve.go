package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
)

func (c *cli) serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the gateway",
		Long: `Run the gateway: the GraphQL API at /graphql, the REST API at /api/v1, the dashboard at /ui/.

Every setting is a flag and an environment variable; the flag wins. One wagraph at a
time uses a data directory: a second one on it exits at once.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromFlags(cmd.Flags(), c.env)
			if err != nil {
				return usageError("wagraph: %v", err)
			}
			return c.serve(cmd, cfg)
		},
	}
	config.Register(cmd.Flags())
	return cmd
}

// serve holds the data directory (when the server keeps anything in it)
// for the life of the process, then runs the server until the command's
// context ends.
func (c *cli) serve(cmd *cobra.Command, cfg config.Config) error {
	if cfg.UsesDataDir() {
		lock, err := lockDataDir(cfg.DataDir, datadir.ServerLock, "wagraph")
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	log := newLogger(cfg, c.stderr)
	mode := "whatsapp"
	if cfg.Sandbox {
		mode = "sandbox: simulated WhatsApp network, no session reaches real WhatsApp"
		if cfg.AllowPrivateURLs {
			mode += "; webhooks and media may reach loopback and private addresses"
		}
	}
	log.Info("wagraph starting", "version", version(), "mode", mode)
	if cfg.UsesDataDir() {
		warnTransient(log, cfg)
	}
	if err := runServer(cmd.Context(), cfg, serveOptions{app: app.Options{Logger: log, Announce: c.stderr}}); err != nil {
		log.Error("wagraph stopped", "err", err)
		return &exitError{code: 1}
	}
	return nil
}

// lockDataDir takes dir's lock file for the process's life. A directory in
// use, or one that cannot be locked, is exit status 1 with the one line of
// the error (datadir.InUseError, AccessError), after wagraph: as every
// other error.
func lockDataDir(dir, file, who string) (*datadir.Lock, error) {
	lock, err := datadir.Acquire(dir, file, who)
	if err != nil {
		return nil, &exitError{code: 1, msg: "wagraph: " + err.Error()}
	}
	return lock, nil
}

// warnTransient says at start when what the data directory holds will be
// lost with its container or its memory (datadir.Transient): `docker run
// --rm … serve --sandbox` would otherwise throw the simulated network
// away each run, unsaid.
func warnTransient(log *slog.Logger, cfg config.Config) {
	t, err := datadir.Transient(cfg.DataDir)
	if err != nil {
		log.Debug("cannot tell what the data directory is on", "data_dir", cfg.DataDir, "err", err)
		return
	}
	if t == nil {
		return
	}
	var holds []string
	if !cfg.Clustered() {
		holds = append(holds, "the database (users, tokens, sessions and their linked devices, webhooks, events)")
	}
	if cfg.Sandbox && cfg.SandboxNetwork == "" {
		holds = append(holds, "the simulated network (its accounts and linked devices: every session must be linked again)")
	}
	log.Warn("the data directory will not be kept: what it holds is lost with it",
		"data_dir", cfg.DataDir, "on", t.On, "holds", strings.Join(holds, " and "), "to_keep_it", t.Keep)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
