package config

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/pflag"
)

// The annotations a flag carries for its help line (FlagUsage): the group
// it is listed under, its environment variable and its default as a person
// reads it. Flags other commands define may carry them too.
const (
	AnnotationGroup   = "wagraph/group"
	AnnotationEnv     = "wagraph/env"
	AnnotationDefault = "wagraph/default"
)

// value is a setting's flag: it keeps the text given; FromFlags parses and
// validates it with the environment, so a bad flag and a bad variable are
// reported alike. Type is what the help shows.
type value struct {
	text, kind string
}

func (v *value) String() string     { return v.text }
func (v *value) Set(s string) error { v.text = s; return nil }
func (v *value) Type() string       { return v.kind }

// textVar is a string flag whose help shows kind as its type.
type textVar struct {
	p    *string
	kind string
}

func (v textVar) String() string     { return *v.p }
func (v textVar) Set(s string) error { *v.p = s; return nil }
func (v textVar) Type() string       { return v.kind }

// TextVar defines a string flag on fs stored in p, shown in the help as of
// type kind (host:port, path), for commands' own flags.
func TextVar(fs *pflag.FlagSet, p *string, name, kind, def, usage string) *pflag.Flag {
	*p = def
	return fs.VarPF(textVar{p: p, kind: kind}, name, "", usage)
}

// Register defines the settings named (every setting when none is) as
// flags of fs, typed, grouped and annotated for FlagUsage. A bool setting
// may be given bare (--sandbox).
func Register(fs *pflag.FlagSet, names ...string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, s := range settings() {
		if len(want) > 0 && !want[s.flag] {
			continue
		}
		f := fs.VarPF(&value{text: s.def, kind: s.kind}, s.flag, "", s.usage)
		if s.kind == "bool" {
			f.NoOptDefVal = "true"
		}
		shown := s.shown
		if shown == "" {
			shown = s.def
		}
		if shown == "" {
			shown = "none"
		}
		f.Annotations = map[string][]string{
			AnnotationGroup:   {s.group},
			AnnotationEnv:     {s.env},
			AnnotationDefault: {shown},
		}
	}
}

// FromFlags reads every setting: from its flag when fs has it and it was
// given, else from its environment variable through lookup, else its
// default; then validates each. fs holds what Register defined, parsed.
func FromFlags(fs *pflag.FlagSet, lookup func(string) (string, bool)) (Config, error) {
	var c Config
	from := map[string]Source{} // by flag; FromDefault when absent
	for _, s := range settings() {
		v := s.def
		if f := fs.Lookup(s.flag); f != nil && f.Changed {
			v, from[s.flag] = f.Value.String(), FromFlag
		} else if ev, ok := lookup(s.env); ok {
			v, from[s.flag] = ev, FromEnv
		}
		if problem := s.parse(&c, v); problem != "" {
			shown := v
			if s.secret {
				shown = redact(v)
			} else if u, err := url.Parse(v); err == nil && u.User != nil {
				shown = u.Redacted() // a password where none belongs is still one
			}
			return Config{}, &Error{Flag: s.flag, Env: s.env, Value: shown, Problem: problem, From: from[s.flag]}
		}
	}
	// The checks of settings together name the one at fault as it was
	// given.
	if c.AdvertiseAddr != "" && !c.Clustered() {
		return Config{}, &Error{Flag: "advertise-addr", Env: "WAGRAPH_ADVERTISE_ADDR", Value: c.AdvertiseAddr,
			Problem: "a cluster shares one PostgreSQL database: set --database-url too, or leave this unset", From: from["advertise-addr"]}
	}
	if err := c.checkCluster(); err != nil {
		err.From = from[err.Flag]
		return Config{}, err
	}
	if err := c.checkNATS(from); err != nil {
		return Config{}, err
	}
	if err := c.checkMedia(from, lookup); err != nil {
		return Config{}, err
	}
	// The sandbox is for development: its webhooks and media are local
	// receivers more often than not.
	if c.Sandbox && from["allow-private-urls"] == FromDefault {
		c.AllowPrivateURLs = true
	}
	return c, nil
}

// Load reads the settings from args (flags, without the command name) and from
// the environment through lookup, applies defaults, and validates every value.
// Usage and flag syntax errors go to usage; -h is pflag.ErrHelp.
func Load(args []string, lookup func(string) (string, bool), usage io.Writer) (Config, error) {
	fs := pflag.NewFlagSet("wagraph serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	Register(fs)
	if err := fs.Parse(NormalizeArgs(fs, args)); err != nil {
		Usage(usage)
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, UnexpectedArgError(fs.Arg(0))
	}
	return FromFlags(fs, lookup)
}

// UnexpectedArgError is a word where a flag was expected.
func UnexpectedArgError(arg string) error {
	return fmt.Errorf("unexpected argument %q: settings are flags such as --addr 127.0.0.1:8080", arg)
}

// NormalizeArgs rewrites args in the forms pflag does not take: a long
// flag with one dash (-addr, -sandbox, as Go's flag package allowed) gets
// two, and a bool flag followed by a separate true or false (--sandbox
// false) takes it as its value. A flag's value is never rewritten.
func NormalizeArgs(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			a = "-" + a
		}
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") {
			if f := fs.Lookup(name); f != nil && i+1 < len(args) {
				next := args[i+1]
				switch {
				case f.NoOptDefVal != "" && (next == "true" || next == "false"):
					a += "=" + next
					i++
				case f.NoOptDefVal == "":
					out = append(out, a, next)
					i++
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// Usage prints every setting of `wagraph serve` by group, with its type,
// environment variable and default.
func Usage(w io.Writer) {
	fs := pflag.NewFlagSet("wagraph serve", pflag.ContinueOnError)
	Register(fs)
	FlagUsage(w, fs)
}

// helpWidth is where help lines wrap.
const helpWidth = 100

// FlagUsage prints the flags of fs by group (AnnotationGroup; flags
// without one under "Flags"), each as
//
//	--name type   what it does (env VAR, default D)
//
// in the order defined. A bool flag shows "bool" and may be given bare.
func FlagUsage(w io.Writer, fs *pflag.FlagSet) {
	type entry struct{ left, usage, notes string }
	var (
		order  []string
		groups = map[string][]entry{}
		width  int
		bools  bool
	)
	sorted := fs.SortFlags
	fs.SortFlags = false // in the order defined
	defer func() { fs.SortFlags = sorted }()
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" { // every command has it
			return
		}
		group := "Flags"
		if g := f.Annotations[AnnotationGroup]; len(g) > 0 && g[0] != "" {
			group = g[0]
		}
		left := "--" + f.Name
		if f.Shorthand != "" {
			left = "-" + f.Shorthand + ", " + left
		}
		if t := f.Value.Type(); t != "" {
			left += " " + t
		}
		bools = bools || f.Value.Type() == "bool"
		var notes []string
		if env := f.Annotations[AnnotationEnv]; len(env) > 0 {
			notes = append(notes, "env "+env[0])
		}
		def := f.DefValue
		if d := f.Annotations[AnnotationDefault]; len(d) > 0 {
			def = d[0]
		}
		if def != "" {
			notes = append(notes, "default "+def)
		}
		note := ""
		if len(notes) > 0 {
			note = "(" + strings.Join(notes, ", ") + ")"
		}
		if _, ok := groups[group]; !ok {
			order = append(order, group)
		}
		groups[group] = append(groups[group], entry{left, f.Usage, note})
		width = max(width, len(left))
	})
	width = min(width, 34)
	for i, g := range order {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s:\n", g)
		for _, e := range groups[g] {
			lines := wrap(e.usage, e.notes, helpWidth-width-4)
			left := e.left
			if len(left) > width { // on a line of its own
				fmt.Fprintf(w, "  %s\n", left)
				left = ""
			}
			for _, l := range lines {
				fmt.Fprintf(w, "  %-*s  %s\n", width, left, l)
				left = ""
			}
		}
	}
	if bools {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "A bool flag alone means true: --sandbox is --sandbox=true; --sandbox=false turns it off.")
	}
}

// wrap breaks s into lines of about n characters at spaces, and ends it
// with note, unbroken: an environment variable and its default are read
// together.
func wrap(s, note string, n int) []string {
	words := strings.Fields(s)
	if note != "" {
		words = append(words, note)
	}
	var lines []string
	line := ""
	for _, word := range words {
		if line != "" && len(line)+1+len(word) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// IsHelp reports whether err is the request for help (-h, --help).
func IsHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }
