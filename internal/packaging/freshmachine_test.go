package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// debianPackagesMarker precedes the README's two lists of the Debian
// packages make installs: what make, make run and make sandbox need, and
// what make test needs besides.
const debianPackagesMarker = "<!-- debian-packages:"

// readmeDebianPackages reads the two lists: the packages in backquotes
// after the colon of each of the two list items below the marker.
func readmeDebianPackages(t *testing.T) (run, test []string) {
	t.Helper()
	_, rest, ok := strings.Cut(readRepoFile(t, "README.md"), debianPackagesMarker)
	if !ok {
		t.Fatalf("README.md has no %q marker", debianPackagesMarker)
	}
	var lists [][]string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "- ") {
			if len(lists) > 0 {
				break
			}
			continue
		}
		_, after, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("README.md's package list item %q has no colon before its packages", line)
		}
		var pkgs []string
		for _, m := range regexp.MustCompile("`([a-z0-9][a-z0-9.+-]*)`").FindAllStringSubmatch(after, -1) {
			pkgs = append(pkgs, m[1])
		}
		lists = append(lists, pkgs)
	}
	if len(lists) != 2 {
		t.Fatalf("README.md has %d package lists after %q, want 2 (make; make test besides)", len(lists), debianPackagesMarker)
	}
	return lists[0], lists[1]
}

// depsPackages reads build/deps.sh's need_<group>() functions: the
// packages each installs when missing (`need PACKAGE CHECK…`), with those
// of the need_ functions it calls.
func depsPackages(t *testing.T, group string) []string {
	t.Helper()
	bodies := map[string]string{}
	for _, m := range regexp.MustCompile(`(?ms)^(need_\w+)\(\) \{(.*?)\}`).FindAllStringSubmatch(readRepoFile(t, "build/deps.sh"), -1) {
		bodies[m[1]] = m[2]
	}
	var pkgs []string
	var add func(fn string)
	add = func(fn string) {
		body, ok := bodies[fn]
		if !ok {
			t.Fatalf("build/deps.sh has no %s()", fn)
		}
		for _, stmt := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == ';' }) {
			f := strings.Fields(stmt)
			switch {
			case len(f) >= 2 && f[0] == "need":
				pkgs = append(pkgs, f[1])
			case len(f) == 1 && strings.HasPrefix(f[0], "need_"):
				add(f[0])
			case len(f) > 0:
				t.Fatalf("build/deps.sh's %s: %q is neither `need PACKAGE CHECK…` nor a need_ function: this test cannot tell what it installs", fn, stmt)
			}
		}
	}
	add("need_" + group)
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// TestReadmeNamesWhatDepsInstalls: the README names exactly the Debian
// packages build/deps.sh may install, for make (run) and for make test
// (test, beyond run's), and no go among them.
func TestReadmeNamesWhatDepsInstalls(t *testing.T) {
	readmeRun, readmeTest := readmeDebianPackages(t)
	run := depsPackages(t, "run")
	var test []string
	for _, p := range depsPackages(t, "test") {
		if !slices.Contains(run, p) {
			test = append(test, p)
		}
	}
	for _, c := range []struct {
		what           string
		readme, script []string
	}{
		{"make, make run and make sandbox (build/deps.sh run)", readmeRun, run},
		{"make test besides (build/deps.sh test)", readmeTest, test},
	} {
		got := slices.Sorted(slices.Values(c.readme))
		if !slices.Equal(got, c.script) {
			t.Errorf("for %s the README names %q, build/deps.sh installs %q", c.what, got, c.script)
		}
	}
	for _, p := range append(depsPackages(t, "test"), depsPackages(t, "test_short")...) {
		if strings.Contains(p, "golang") {
			t.Errorf("build/deps.sh installs %s: Go is build/go.sh's, under .toolchain/, never on PATH", p)
		}
	}
}

// freshMachine is a PATH as a machine without Go has it: the commands make,
// build/deps.sh and build/go.sh run, and an apt-get (and sudo) that only
// write down what they were asked to install.
type freshMachine struct {
	path    string // the PATH directory
	aptLog  string // one line per apt-get call
	home    string
	environ []string
}

func newFreshMachine(t *testing.T) freshMachine {
	t.Helper()
	m := freshMachine{path: pathWithoutGo(t), home: t.TempDir()}
	for _, name := range []string{"make", "env", "id", "dirname", "echo"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s is not installed: %v", name, err)
		}
		link := filepath.Join(m.path, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
	}
	m.aptLog = filepath.Join(t.TempDir(), "apt-get.log")
	fakes := map[string]string{
		"apt-get": "#!/bin/sh\necho \"$*\" >>" + m.aptLog + "\n",
		"sudo":    "#!/bin/sh\nexec \"$@\"\n",
	}
	for name, script := range fakes {
		if err := os.WriteFile(filepath.Join(m.path, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.environ = []string{"PATH=" + m.path, "HOME=" + m.home}
	return m
}

// tree lists the names under dir with their sizes: what a run must leave
// as it was.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + fi.Mode().String() + " " + strings.Repeat("#", int(min(fi.Size(), 64))) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFreshMachineKeepsGoOffPath runs what `make sandbox` runs before it
// builds (`make toolchain`: the deps-run prerequisite, then the Makefile's
// GO, build/go.sh) as on a Debian machine without Go: no go on PATH, no
// GOPROXY, a HOME of its own whose go configuration file names the module
// proxy (as `go env -w GOPROXY=…` leaves it). Go lands under the
// repository's .toolchain/ and nowhere else; apt-get is asked only for
// packages the README names and never for a Go; afterwards PATH still has
// no go, and HOME and the PATH directory are as they were. A second make
// says nothing of Go, also beside an older go on PATH.
func TestFreshMachineKeepsGoOffPath(t *testing.T) {
	if testing.Short() {
		t.Skip("a Go toolchain fetched and unpacked: make test runs it, make test-short skips it")
	}
	root := repoRoot(t)
	version, _ := pinnedGo(t)
	m := newFreshMachine(t)
	goenv := filepath.Join(m.home, ".config", "go", "env")
	if err := os.MkdirAll(filepath.Dir(goenv), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goenv, []byte("GOPROXY="+moduleProxy(t)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(root, ".toolchain")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(cache, "fresh-machine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	wantGo := filepath.Join(dir, "go"+version, "bin", "go")
	env := append(m.environ, "WAGRAPH_TOOLCHAIN_DIR="+dir, "WAGRAPH_TOOLCHAIN_CACHE="+cache)
	homeBefore, pathBefore := tree(t, m.home), tree(t, m.path)

	makeToolchain := func(env []string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command("make", "-s", "toolchain")
		cmd.Dir = root
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("make toolchain on a machine without Go: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	stdout, stderr := makeToolchain(env)
	if got := strings.TrimSpace(stdout); got != wantGo {
		t.Fatalf("make toolchain printed %q, want the Go under .toolchain/ %q\nstderr:\n%s", got, wantGo, stderr)
	}
	if v := goVersionOf(t, wantGo, m.path); !strings.HasPrefix(v, "go version go"+version+" ") {
		t.Errorf("the Go make fetched says %q, want go%s", v, version)
	}

	apt, err := os.ReadFile(m.aptLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	readmeRun, _ := readmeDebianPackages(t)
	for _, call := range strings.Split(strings.TrimSpace(string(apt)), "\n") {
		f := strings.Fields(call)
		if len(f) == 0 || f[0] != "install" {
			continue
		}
		for _, pkg := range f[1:] {
			if strings.HasPrefix(pkg, "-") {
				continue
			}
			if !slices.Contains(readmeRun, pkg) || strings.Contains(pkg, "golang") {
				t.Errorf("make asked apt-get to install %s, which the README does not name for make (%q)", pkg, readmeRun)
			}
		}
	}
	t.Logf("apt-get was asked: %s", strings.ReplaceAll(strings.TrimSpace(string(apt)), "\n", "; "))

	check := exec.Command(filepath.Join(m.path, "bash"), "-c", "command -v go")
	check.Env = m.environ
	if out, err := check.Output(); err == nil {
		t.Errorf("after make, PATH has a go: %s", out)
	}
	if got := tree(t, m.home); got != homeBefore {
		t.Errorf("make wrote in HOME:\nbefore:\n%safter:\n%s", homeBefore, got)
	}
	if got := tree(t, m.path); got != pathBefore {
		t.Errorf("make changed the PATH directory:\nbefore:\n%safter:\n%s", pathBefore, got)
	}

	// Every later make: the same Go, and not a word about it, also with an
	// older go on PATH.
	older := t.TempDir()
	if err := os.WriteFile(filepath.Join(older, "go"), []byte("#!/bin/sh\necho go1.19.8\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range [][]string{env, append(slices.Clone(env[1:]), "PATH="+m.path+":"+older)} {
		stdout, stderr = makeToolchain(e)
		if strings.TrimSpace(stdout) != wantGo || strings.Contains(stderr, "build/go.sh") {
			t.Errorf("a later make toolchain printed %q, want %q, and on stderr (want nothing of build/go.sh):\n%s", stdout, wantGo, stderr)
		}
	}
}

// TestBootstrapProxyWithoutGo: with no go on PATH, build/go.sh finds the
// module proxy as the go command would (GOPROXY, else its configuration
// file, else Go's default), so no older Go is needed to fetch Go; with
// none to fetch from it stops saying what to set.
func TestBootstrapProxyWithoutGo(t *testing.T) {
	version, _ := pinnedGo(t)
	pathDir := pathWithoutGo(t)
	zip := "/golang.org/toolchain/@v/v0.0.1-go" + version + ".linux-"
	cases := []struct {
		name    string
		env     []string
		envFile string // the go configuration file's content, in HOME's default place
		want    string // the proxy named, "" for none
	}{
		{"GOPROXY", []string{"GOPROXY=https://goproxy.example/a,direct"}, "GOPROXY=https://ignored.example\n", "https://goproxy.example/a"},
		{"go env -w's file", nil, "GOFLAGS=-mod=mod\nGOPROXY=https://corp.example/go|https://proxy.golang.org\n", "https://corp.example/go"},
		{"the file GOENV names", []string{"GOENV=@FILE@"}, "GOPROXY=https://other.example\n", "https://other.example"},
		{"nothing set: Go's default", nil, "", "https://proxy.golang.org"},
		{"GOPROXY=direct: none", []string{"GOPROXY=direct"}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			file := filepath.Join(home, ".config", "go", "env")
			if c.envFile != "" {
				if slices.Contains(c.env, "GOENV=@FILE@") {
					file = filepath.Join(home, "goenv")
				}
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(c.envFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"PATH=" + pathDir, "HOME=" + home, "WAGRAPH_TOOLCHAIN_DIR=" + dir, "WAGRAPH_TOOLCHAIN_CACHE=" + dir}
			for _, e := range c.env {
				env = append(env, strings.ReplaceAll(e, "@FILE@", file))
			}
			r := runScript(t, env, "build/go.sh", "--no-download")
			if r.err != nil || strings.TrimSpace(r.stdout) != filepath.Join(dir, "go"+version, "bin", "go") {
				t.Fatalf("build/go.sh --no-download: %v, printed %q\n%s", r.err, r.stdout, r.stderr)
			}
			if c.want == "" {
				if strings.Contains(r.stderr, "would be downloaded") {
					t.Errorf("with no proxy it names one:\n%s", r.stderr)
				}
				full := runScript(t, env, "build/go.sh")
				if full.err == nil || !strings.Contains(full.stderr, "no Go module proxy") || !strings.Contains(full.stderr, "set GOPROXY") {
					t.Errorf("with no proxy build/go.sh: %v, stderr:\n%s", full.err, full.stderr)
				}
				return
			}
			if !strings.Contains(r.stderr, "would be downloaded from "+c.want+zip) {
				t.Errorf("build/go.sh does not name %s%s…:\n%s", c.want, zip, r.stderr)
			}
		})
	}
}
