package packaging

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// goShTools are the commands build/go.sh runs besides go. The bootstrap
// tests' PATH holds links to these and nothing else: it has no go, and a
// command the script starts to need without saying so fails them.
var goShTools = []string{"bash", "sed", "head", "uname", "mkdir", "flock", "sha256sum", "cut",
	"curl", "unzip", "mktemp", "chmod", "mv", "rm", "dirname", "tail"}

// pathWithoutGo is a directory for PATH with goShTools and no go.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range goShTools {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatalf("%s is not installed (build/deps.sh run installs what build/go.sh needs): %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	check := exec.Command(filepath.Join(dir, "bash"), "-c", "command -v go")
	check.Env = []string{"PATH=" + dir}
	if out, err := check.Output(); err == nil {
		t.Fatalf("PATH=%s finds a go (%s): the test needs a PATH without one", dir, out)
	}
	return dir
}

// pinnedGo is build/go.sh's GO_VERSION and its sum for this machine.
func pinnedGo(t *testing.T) (version, sum string) {
	t.Helper()
	script := readRepoFile(t, "build/go.sh")
	m := regexp.MustCompile(`(?m)^GO_VERSION=(\S+)$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("build/go.sh has no GO_VERSION= line")
	}
	s := regexp.MustCompile(`(?m)^\s*\[` + runtime.GOARCH + `\]=([0-9a-f]{64})$`).FindStringSubmatch(script)
	if s == nil {
		t.Fatalf("build/go.sh pins no SHA-256 for linux/%s", runtime.GOARCH)
	}
	return m[1], s[1]
}

// versionParts splits 1.26.8 (or 1.27rc1, as 1.27.0) into numbers.
func versionParts(t *testing.T, v string) [3]int {
	t.Helper()
	v = regexp.MustCompile(`(rc|beta)\d+$`).ReplaceAllString(v, "")
	var p [3]int
	for i, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil || i > 2 {
			t.Fatalf("version %q is not 1.N[.P]", v)
		}
		p[i] = n
	}
	return p
}

func TestPinnedGoCoversGoMod(t *testing.T) {
	version, _ := pinnedGo(t)
	have, want := versionParts(t, version), versionParts(t, goModVersion(t))
	for i := range have {
		if have[i] != want[i] {
			if have[i] < want[i] {
				t.Fatalf("build/go.sh pins Go %s, go.mod asks for %s: update GO_VERSION and its sums", version, goModVersion(t))
			}
			break
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !regexp.MustCompile(`(?m)^\s*\[` + arch + `\]=[0-9a-f]{64}$`).MatchString(readRepoFile(t, "build/go.sh")) {
			t.Errorf("build/go.sh pins no SHA-256 for linux/%s", arch)
		}
	}
}

// bootstrapEnv is the whole environment of a build/go.sh run.
func bootstrapEnv(path, proxy, dir, cache string) []string {
	return []string{"PATH=" + path, "GOPROXY=" + proxy, "WAGRAPH_TOOLCHAIN_DIR=" + dir, "WAGRAPH_TOOLCHAIN_CACHE=" + cache}
}

// moduleProxy is the module proxy the go running the tests uses: the one
// the bootstrap would find configured on this machine.
func moduleProxy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	for _, e := range strings.FieldsFunc(strings.TrimSpace(string(out)), func(r rune) bool { return r == ',' || r == '|' }) {
		if strings.HasPrefix(e, "https://") || strings.HasPrefix(e, "http://") {
			return e
		}
	}
	t.Fatalf("go env GOPROXY names no proxy: %q", out)
	return ""
}

// goVersionOf is `go version` of the go at path, run outside any module
// and with no HOME: without a configuration directory Go's telemetry is
// off, so no sidecar process outlives the command and writes in a
// directory the test removes.
func goVersionOf(t *testing.T, goPath, pathDir string) string {
	t.Helper()
	cmd := exec.Command(goPath, "version")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + pathDir, "GOTOOLCHAIN=local"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", goPath, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestBootstrap runs build/go.sh as on a machine without Go, against the
// real module proxy. The zip is kept in the repository's .toolchain/ (as
// make keeps it), so only the first run anywhere downloads; every run
// checks, unpacks and moves a toolchain of its own into place, inside
// .toolchain/ so that the go command's patterns are seen to pass it over.
func TestBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("a Go toolchain fetched and unpacked: make test runs it, make test-short skips it")
	}
	root := repoRoot(t)
	version, sum := pinnedGo(t)
	zipName := "v0.0.1-go" + version + ".linux-" + runtime.GOARCH + ".zip"
	pathDir := pathWithoutGo(t)
	cache := filepath.Join(root, ".toolchain")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(cache, "packaging-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	wantGo := filepath.Join(dir, "go"+version, "bin", "go")
	env := bootstrapEnv(pathDir, moduleProxy(t), dir, cache)

	t.Run("a PATH without go gets the pinned Go from the proxy", func(t *testing.T) {
		r := runScript(t, env, "build/go.sh")
		if r.err != nil {
			t.Fatalf("build/go.sh: %v\n%s", r.err, r.stderr)
		}
		if got := strings.TrimSpace(r.stdout); got != wantGo {
			t.Fatalf("build/go.sh printed %q, want %q (stderr: %s)", got, wantGo, r.stderr)
		}
		v := goVersionOf(t, wantGo, pathDir)
		if !strings.HasPrefix(v, "go version go1.26.") || !strings.HasPrefix(v, "go version go"+version+" ") {
			t.Fatalf("the bootstrapped go says %q, want go version go%s", v, version)
		}
		for _, tool := range []string{"compile", "link", "vet", "cgo"} {
			fi, err := os.Stat(filepath.Join(dir, "go"+version, "pkg", "tool", "linux_"+runtime.GOARCH, tool))
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("pkg/tool/linux_%s/%s is not executable: %v", runtime.GOARCH, tool, err)
			}
		}
		if got := fileSHA256(t, filepath.Join(cache, zipName)); got != sum {
			t.Fatalf("the cached zip's SHA-256 is %s, the pinned one %s", got, sum)
		}
	})

	t.Run("a second run downloads and unpacks nothing", func(t *testing.T) {
		r := runScript(t, env, "build/go.sh")
		if r.err != nil || strings.TrimSpace(r.stdout) != wantGo {
			t.Fatalf("build/go.sh: %v, printed %q, want %q\n%s", r.err, r.stdout, wantGo, r.stderr)
		}
		if strings.Contains(r.stderr, "downloading") || strings.Contains(r.stderr, "unpacking") {
			t.Fatalf("the second run fetched again:\n%s", r.stderr)
		}
	})

	t.Run("the go command's patterns pass over the toolchain", func(t *testing.T) {
		cmd := exec.Command(wantGo, "list", "-e", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list ./...: %v", err)
		}
		pkgs := strings.Fields(string(out))
		if len(pkgs) < 10 {
			t.Fatalf("go list ./... found %d packages: %q", len(pkgs), pkgs)
		}
		for _, p := range pkgs {
			if strings.Contains(p, ".toolchain") {
				t.Errorf("go list ./... lists %s: the toolchain's sources would be built, tested and vetted", p)
			}
		}
		rel, err := filepath.Rel(root, wantGo)
		if err != nil {
			t.Fatal(err)
		}
		ignored := exec.Command("git", "-C", root, "check-ignore", "-q", rel)
		if err := ignored.Run(); err != nil {
			t.Errorf("git does not ignore %s: %v", rel, err)
		}
	})

	t.Run("a cached zip that does not match is downloaded again", func(t *testing.T) {
		proxy := t.TempDir()
		proxyZip := filepath.Join(proxy, "golang.org", "toolchain", "@v", zipName)
		copyFile(t, filepath.Join(cache, zipName), proxyZip)
		ownCache, ownDir := t.TempDir(), t.TempDir()
		if err := os.WriteFile(filepath.Join(ownCache, zipName), []byte("not the toolchain"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runScript(t, bootstrapEnv(pathDir, "file://"+proxy+",https://proxy.invalid", ownDir, ownCache), "build/go.sh")
		want := filepath.Join(ownDir, "go"+version, "bin", "go")
		if r.err != nil || strings.TrimSpace(r.stdout) != want {
			t.Fatalf("build/go.sh: %v, printed %q, want %q\n%s", r.err, r.stdout, want, r.stderr)
		}
		if !strings.Contains(r.stderr, "does not match") || !strings.Contains(r.stderr, "file://"+proxyZip) {
			t.Fatalf("no word of the mismatch and of the download from the first GOPROXY entry:\n%s", r.stderr)
		}
		if got := fileSHA256(t, filepath.Join(ownCache, zipName)); got != sum {
			t.Fatalf("the cache holds a zip of SHA-256 %s, want %s", got, sum)
		}
	})

	t.Run("a zip of another SHA-256 is refused", func(t *testing.T) {
		proxy := t.TempDir()
		proxyZip := filepath.Join(proxy, "golang.org", "toolchain", "@v", zipName)
		if err := os.MkdirAll(filepath.Dir(proxyZip), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(proxyZip, []byte("PK\x05\x06"+strings.Repeat("\x00", 18)), 0o644); err != nil {
			t.Fatal(err)
		}
		ownCache, ownDir := t.TempDir(), t.TempDir()
		r := runScript(t, bootstrapEnv(pathDir, "file://"+proxy, ownDir, ownCache), "build/go.sh")
		if r.err == nil {
			t.Fatalf("build/go.sh accepted a zip that is not the pinned one and printed %q", r.stdout)
		}
		if !strings.Contains(r.stderr, "refusing file://"+proxyZip) || !strings.Contains(r.stderr, sum) {
			t.Fatalf("the refusal does not name the URL and the pinned sum:\n%s", r.stderr)
		}
		if r.stdout != "" {
			t.Fatalf("a refused bootstrap printed %q", r.stdout)
		}
		for _, leftover := range []string{filepath.Join(ownDir, "go"+version), filepath.Join(ownCache, zipName)} {
			if _, err := os.Stat(leftover); err == nil {
				t.Errorf("%s exists after the refusal", leftover)
			}
		}
	})
}

// TestBootstrapChoosesTheGoOnPath: a go on PATH is used when it is at
// least go.mod's version, whatever it is, and passed over otherwise.
func TestBootstrapChoosesTheGoOnPath(t *testing.T) {
	version, _ := pinnedGo(t)
	want := versionParts(t, goModVersion(t))
	older := "go1.19.8"
	if want[2] > 0 {
		older = "go" + strconv.Itoa(want[0]) + "." + strconv.Itoa(want[1]) + "." + strconv.Itoa(want[2]-1)
	}
	nextRC := "go" + strconv.Itoa(want[0]) + "." + strconv.Itoa(want[1]+1) + "rc1"
	cases := []struct {
		name, script string
		usesPath     bool
	}{
		{"go.mod's own version", "echo go" + goModVersion(t), true},
		{"a newer release candidate", "echo " + nextRC, true},
		{"an older patch release", "echo " + older, false},
		{"Debian 12's Go 1.19", "echo go1.19.8", false},
		{"a go that fails", "echo 'go: cannot find GOROOT directory' >&2; exit 2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pathDir := pathWithoutGo(t)
			fakeGo := filepath.Join(pathDir, "go")
			if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			r := runScript(t, bootstrapEnv(pathDir, "file:///nonexistent", dir, dir), "build/go.sh", "--no-download")
			if r.err != nil {
				t.Fatalf("build/go.sh --no-download: %v\n%s", r.err, r.stderr)
			}
			got := strings.TrimSpace(r.stdout)
			wantPath := filepath.Join(dir, "go"+version, "bin", "go")
			if c.usesPath {
				wantPath = fakeGo
			}
			if got != wantPath {
				t.Fatalf("build/go.sh chose %q, want %q\n%s", got, wantPath, r.stderr)
			}
			if !c.usesPath && !strings.Contains(r.stderr, "older than go.mod's") {
				t.Errorf("passing over the go on PATH says nothing of why:\n%s", r.stderr)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 0 {
				t.Errorf("--no-download wrote %d entries in the toolchain directory (%v)", len(entries), err)
			}
		})
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:2], []byte("PK")) {
		t.Fatalf("%s is not a zip", from)
	}
}
