// Command wagraph is the WhatsApp gateway: `wagraph serve` runs the server,
// `wagraph version` prints the build.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit code. ctx ends the server
// (SIGINT and SIGTERM in main).
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], lookupEnv, stderr)
	case "sandbox-network":
		return sandboxNetwork(ctx, args[1:], stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "wagraph", version())
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "wagraph: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

func serve(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) int {
	cfg, err := config.Load(args, lookupEnv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "wagraph:", err)
		return 2
	}
	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	}
	log := slog.New(h)
	mode := "whatsapp"
	if cfg.Sandbox {
		mode = "sandbox: simulated WhatsApp network, no session reaches real WhatsApp"
	}
	log.Info("wagraph starting", "version", version(), "mode", mode)
	if err := app.Run(ctx, cfg, app.Options{Logger: log, Announce: stderr}); err != nil {
		log.Error("wagraph stopped", "err", err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: wagraph <command> [flags]")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "commands:")
	fmt.Fprintln(w, "  serve            run the gateway")
	fmt.Fprintln(w, "  sandbox-network  run the simulated WhatsApp network as its own process (loopback only)")
	fmt.Fprintln(w, "  version          print the version")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "serve settings (each flag has an environment variable; the flag wins):")
	config.Usage(w)
}

func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}
