package packaging

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// npmPin is one npm package's version as the repository pins it.
type npmPin struct {
	version string
	where   string // the package.json that pins it
}

// repositoryNpmPins reads every package.json of the repository (the tools
// the tests run; node_modules and .toolchain passed over): each
// dependency's exact version, which its package-lock.json must install.
func repositoryNpmPins(t *testing.T) map[string]npmPin {
	t.Helper()
	root := repoRoot(t)
	pins := map[string]npmPin{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".toolchain" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.Name() != "package.json" {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		var pkg struct{ Dependencies, DevDependencies map[string]string }
		readJSON(t, p, &pkg)
		var lock struct {
			Packages map[string]struct{ Version string } `json:"packages"`
		}
		readJSON(t, filepath.Join(filepath.Dir(p), "package-lock.json"), &lock)
		for _, deps := range []map[string]string{pkg.Dependencies, pkg.DevDependencies} {
			for name, version := range deps {
				if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(version) {
					t.Errorf("%s: %s %q is not an exact version", rel, name, version)
				}
				if locked := lock.Packages["node_modules/"+name].Version; locked != version {
					t.Errorf("%s pins %s %s, its package-lock.json installs %q", rel, name, version, locked)
				}
				if other, ok := pins[name]; ok && other.version != version {
					t.Errorf("%s is pinned at %s in %s and at %s in %s: the README can give only one", name, other.version, other.where, version, rel)
				}
				pins[name] = npmPin{version: version, where: rel}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) == 0 {
		t.Fatal("no package.json with dependencies in the repository")
	}
	return pins
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readmeNpmInstalls is every package spec of the README's `npm i` and
// `npm install` commands (continued lines joined; commands split at && and
// ;), as written.
func readmeNpmInstalls(t *testing.T) []string {
	t.Helper()
	text := strings.ReplaceAll(readRepoFile(t, "README.md"), "\\\n", " ")
	var specs []string
	for _, line := range strings.Split(text, "\n") {
		for _, cmd := range regexp.MustCompile(`&&|;|\|\|`).Split(line, -1) {
			f := strings.Fields(cmd)
			if len(f) < 2 || f[0] != "npm" || (f[1] != "i" && f[1] != "install") {
				continue
			}
			for _, a := range f[2:] {
				if !strings.HasPrefix(a, "-") {
					specs = append(specs, a)
				}
			}
		}
	}
	return specs
}

// TestReadmeNpmVersionsArePinned: every npm package the README has
// installed is given with the exact version the repository's tests pin
// (package.json, and what package-lock.json installs), and every pinned
// package the README names is among them, so that what the README says to
// run is what the tests ran (npm's latest may not install or generate).
func TestReadmeNpmVersionsArePinned(t *testing.T) {
	pins := repositoryNpmPins(t)
	specs := readmeNpmInstalls(t)
	if len(specs) == 0 {
		t.Fatal("the README has no npm install command")
	}
	installed := map[string]bool{}
	for _, spec := range specs {
		at := strings.LastIndex(spec, "@")
		if at <= 0 {
			t.Errorf("the README installs %s without a version: give the pinned one", spec)
			continue
		}
		name, version := spec[:at], spec[at+1:]
		installed[name] = true
		pin, ok := pins[name]
		switch {
		case !ok:
			t.Errorf("the README installs %s, which no package.json of the repository pins: the tests never ran it", spec)
		case version != pin.version:
			t.Errorf("the README installs %s, %s pins %s@%s", spec, pin.where, name, pin.version)
		}
	}
	readme := readRepoFile(t, "README.md")
	for name, pin := range pins {
		mention := regexp.MustCompile(`(^|[^\w@/.-])` + regexp.QuoteMeta(name) + `($|[^\w/-])`)
		if mention.MatchString(readme) && !installed[name] {
			t.Errorf("the README names %s but installs it nowhere with its version (%s@%s, pinned in %s)", name, name, pin.version, pin.where)
		}
	}
}
