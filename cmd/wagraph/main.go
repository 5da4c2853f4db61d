// Command wagraph is the WhatsApp gateway: `wagraph serve` runs the server,
// `wagraph doctor` checks what it needs, `wagraph backup` copies its data
// while it runs, `wagraph receive` prints the webhook deliveries sent to it,
// `wagraph sandbox-network` runs the simulated WhatsApp
// network on its own, `wagraph healthcheck` asks a running server whether it
// is ready (the container's health check), `wagraph version` prints the
// build. The commands are
// cobra's; every serve setting is a flag and an environment variable
// (internal/config).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is what the commands share: the environment and the output streams.
type cli struct {
	env            func(string) (string, bool)
	stdout, stderr io.Writer
}

// exitError ends the command with code, after printing msg (when there is
// one) on stderr as it is.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a command line that cannot be run: exit status 2.
func usageError(format string, a ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, a...)}
}

// run is the whole command; it returns the exit code. ctx ends the server
// (SIGINT and SIGTERM in main).
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	c := &cli{env: lookupEnv, stdout: stdout, stderr: stderr}
	root := c.root()
	root.SetArgs(normalize(root, args))
	err := root.ExecuteContext(ctx)
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(stderr, ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "wagraph:", err)
	return 2
}

// root is the wagraph command and its subcommands.
func (c *cli) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "wagraph",
		Short:         "a WhatsApp gateway: GraphQL and REST APIs over linked WhatsApp sessions",
		Version:       version(),
		Args:          cobra.ArbitraryArgs, // an unknown command is RunE's to explain
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				writeRootHelp(c.stderr, cmd)
				return &exitError{code: 2}
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				return usageError("wagraph: unknown command %q; did you mean %s? (wagraph help lists the commands)", args[0], strings.Join(s, " or "))
			}
			return usageError("wagraph: unknown command %q (wagraph help lists the commands)", args[0])
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetVersionTemplate("wagraph {{.Version}}\n")
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetFlagErrorFunc(flagError)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { writeHelp(cmd.OutOrStdout(), cmd) })
	root.AddCommand(c.serveCommand(), c.doctorCommand(), c.backupCommand(), c.receiveCommand(), c.sandboxNetworkCommand(), c.healthcheckCommand(), c.versionCommand())
	return root
}

func (c *cli) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(c.stdout, "wagraph", version())
			return nil
		},
	}
}

// noArgs refuses words where flags were expected.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("wagraph: %v", config.UnexpectedArgError(args[0]))
	}
	return nil
}

// normalize rewrites the flags after the command's name as
// config.NormalizeArgs does (-addr is --addr; --sandbox false).
func normalize(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return config.NormalizeArgs(root.Flags(), args)
	}
	for i, a := range args {
		if a == cmd.Name() {
			return append(append([]string{}, args[:i+1]...), config.NormalizeArgs(cmd.Flags(), args[i+1:])...)
		}
	}
	return args
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
