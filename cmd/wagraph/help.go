package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wagraph/wagraph/internal/config"
)

// writeRootHelp lists the commands.
func writeRootHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintf(w, "wagraph: %s\n\n", root.Short)
	fmt.Fprintln(w, "usage: wagraph <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	// In the order a newcomer needs them, not alphabetical.
	rank := map[string]int{"serve": 1, "doctor": 2, "backup": 3, "receive": 4, "sandbox-network": 5, "healthcheck": 6, "version": 7}
	cmds := slices.Clone(root.Commands())
	slices.SortStableFunc(cmds, func(a, b *cobra.Command) int { return cmp.Compare(rank[a.Name()], rank[b.Name()]) })
	for _, cmd := range cmds {
		if cmd.IsAvailableCommand() {
			fmt.Fprintf(w, "  %-16s %s\n", cmd.Name(), cmd.Short)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each command's settings: wagraph <command> --help. Start with: wagraph serve --sandbox")
}

// writeHelp is the help of any command: the root's lists the commands; a
// command's says what it does and lists its flags by group, each with its
// type, environment variable and default.
func writeHelp(w io.Writer, cmd *cobra.Command) {
	if !cmd.HasParent() {
		writeRootHelp(w, cmd)
		return
	}
	text := cmd.Long
	if text == "" {
		text = cmd.Short
	}
	fmt.Fprintf(w, "%s\n\nusage: %s\n", strings.TrimSpace(text), cmd.UseLine())
	if cmd.HasAvailableFlags() {
		fmt.Fprintln(w)
		config.FlagUsage(w, cmd.Flags())
	}
}

// flagError explains a flag the command does not have, suggesting the
// nearest one it has; other flag errors name the command's help.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "" {
		name := ne.GetSpecifiedName()
		if s := suggestFlag(cmd.Flags(), name); s != "" {
			return usageError("%s: unknown flag: --%s; %s", cmd.CommandPath(), name, s)
		}
		return usageError("%s: unknown flag: --%s (%s --help lists every flag)", cmd.CommandPath(), name, cmd.CommandPath())
	}
	return usageError("%s: %v (%s --help lists every flag)", cmd.CommandPath(), err, cmd.CommandPath())
}

// alias is a flag name people reach for, and the flag that does it.
type alias struct {
	flag, note string
}

// aliases are the names other gateways and habits use for wagraph's flags.
func aliases() map[string]alias {
	const listen = "the listen address is host:port"
	const db = "a postgres:// URL; without it the data is SQLite in --data-dir"
	return map[string]alias{
		"port":        {"addr", listen},
		"listen":      {"addr", listen},
		"host":        {"addr", listen},
		"bind":        {"addr", listen},
		"address":     {"addr", listen},
		"db":          {"database-url", db},
		"database":    {"database-url", db},
		"dsn":         {"database-url", db},
		"postgres":    {"database-url", db},
		"token":       {"admin-token", "the bootstrap admin token, at least 32 characters"},
		"api-key":     {"admin-token", "the bootstrap admin token, at least 32 characters"},
		"data":        {"data-dir", "the directory of the SQLite databases"},
		"dir":         {"data-dir", "the directory of the SQLite databases"},
		"datadir":     {"data-dir", "the directory of the SQLite databases"},
		"output":      {"to", "the file the backup is written to"},
		"out":         {"to", "the file the backup is written to"},
		"file":        {"to", "the file the backup is written to"},
		"verbose":     {"log-level", "--log-level debug logs the most"},
		"debug":       {"log-level", "--log-level debug logs the most; --debug-addr serves pprof"},
		"json":        {"log-format", "--log-format json"},
		"timeout":     {"webhook-timeout", "one webhook delivery attempt's limit"},
		"private-ips": {"allow-private-urls", "lets webhook and media URLs reach loopback and private addresses"},
	}
}

// suggestFlag names the flag of fs nearest to name: a known alias, then
// the closest spelling, then a flag that name is part of or holds.
func suggestFlag(fs *pflag.FlagSet, name string) string {
	name = strings.ToLower(name)
	if a, ok := aliases()[name]; ok && fs.Lookup(a.flag) != nil {
		return fmt.Sprintf("did you mean --%s? (%s)", a.flag, a.note)
	}
	best, bestDist := "", 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		d := editDistance(name, f.Name)
		if best == "" || d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	if best != "" && (bestDist <= 2 || bestDist <= len(name)/3) {
		return fmt.Sprintf("did you mean --%s?", best)
	}
	var part string
	fs.VisitAll(func(f *pflag.Flag) {
		if part == "" && len(name) >= 3 && f.Name != "help" && (strings.Contains(f.Name, name) || strings.Contains(name, f.Name)) {
			part = f.Name
		}
	})
	if part != "" {
		return fmt.Sprintf("did you mean --%s?", part)
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
