package packaging

import (
	"encoding/json"
	"net"
	"path"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	name string // upper case: FROM, RUN, ENV…
	args string
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped (inside continuations too, as Docker does), lines
// ending in a backslash joined to the next, the parser directives kept
// out.
func parseDockerfile(t *testing.T, text string) []instruction {
	t.Helper()
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if body, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		name, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{name: strings.ToUpper(name), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("the Dockerfile ends inside a continued line: %q", cur.String())
	}
	return out
}

// image is what the Dockerfile says of the image.
type image struct {
	args        map[string]string // ARG defaults before the first FROM
	buildFrom   string            // the build stage's base
	buildStage  string            // its name (AS …)
	goBuild     []string          // the build stage's `go build` arguments
	cgo         bool              // that RUN sets CGO_ENABLED=1
	finalFrom   string            // the final stage's base
	copyFrom    string            // COPY --from=<stage> <src> <dest>
	copySrc     string
	copyDest    string
	env         map[string]string // the final stage's ENV
	user        string
	userID      string // useradd --uid
	groupID     string // useradd --gid
	groupAddID  string // groupadd --gid
	dataOwner   string // chown <owner> <data dir>
	packages    []string
	volumes     []string
	expose      []string
	healthcheck []string // the HEALTHCHECK's CMD, exec form
	entrypoint  []string
	cmd         []string
}

func readDockerfile(t *testing.T) image {
	t.Helper()
	img := image{args: map[string]string{}, env: map[string]string{}}
	stage := -1
	for _, in := range parseDockerfile(t, readRepoFile(t, "Dockerfile")) {
		if in.name == "FROM" {
			stage++
			f := strings.Fields(in.args)
			switch stage {
			case 0:
				img.buildFrom = f[0]
				if len(f) == 3 && strings.EqualFold(f[1], "AS") {
					img.buildStage = f[2]
				}
			case 1:
				img.finalFrom = f[0]
			default:
				t.Fatalf("the Dockerfile has %d stages; this test reads two (build, final)", stage+1)
			}
			continue
		}
		switch {
		case in.name == "ARG" && stage < 0:
			k, v, _ := strings.Cut(in.args, "=")
			img.args[k] = v
		case in.name == "RUN" && stage == 0:
			if i := strings.Index(in.args, "go build "); i >= 0 {
				img.goBuild = strings.Fields(in.args[i+len("go build "):])
				img.cgo = strings.Contains(in.args[:i], "CGO_ENABLED=1 ")
			}
		case in.name == "RUN" && stage == 1:
			readRun(t, &img, in.args)
		case in.name == "COPY" && stage == 1:
			f := strings.Fields(in.args)
			if len(f) == 3 && strings.HasPrefix(f[0], "--from=") {
				img.copyFrom, img.copySrc, img.copyDest = strings.TrimPrefix(f[0], "--from="), f[1], f[2]
			}
		case in.name == "ENV" && stage == 1:
			for _, kv := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("ENV %q: write ENV KEY=value", in.args)
				}
				img.env[k] = v
			}
		case in.name == "USER" && stage == 1:
			img.user = in.args
		case in.name == "VOLUME" && stage == 1:
			img.volumes = append(img.volumes, jsonOrFields(t, in.args)...)
		case in.name == "EXPOSE" && stage == 1:
			img.expose = append(img.expose, strings.Fields(in.args)...)
		case in.name == "HEALTHCHECK" && stage == 1:
			_, cmd, ok := strings.Cut(in.args, " CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK %q has no CMD", in.args)
			}
			img.healthcheck = jsonArray(t, strings.TrimSpace(cmd))
		case in.name == "ENTRYPOINT" && stage == 1:
			img.entrypoint = jsonArray(t, in.args)
		case in.name == "CMD" && stage == 1:
			img.cmd = jsonArray(t, in.args)
		}
	}
	return img
}

// readRun takes the packages, the user and the data directory's owner
// from a RUN of the final stage.
func readRun(t *testing.T, img *image, run string) {
	t.Helper()
	for _, step := range strings.Split(run, "&&") {
		f := strings.Fields(step)
		switch {
		case len(f) > 2 && f[0] == "apt-get" && f[1] == "install":
			for _, w := range f[2:] {
				if !strings.HasPrefix(w, "-") {
					img.packages = append(img.packages, w)
				}
			}
		case len(f) > 1 && f[0] == "useradd":
			img.userID, img.groupID = option(f, "--uid"), option(f, "--gid")
			img.user = f[len(f)-1]
		case len(f) > 1 && f[0] == "groupadd":
			img.groupAddID = option(f, "--gid")
		case len(f) == 3 && f[0] == "chown":
			img.dataOwner = f[1] + " " + f[2]
		}
	}
}

// option is the value after flag in words.
func option(words []string, flag string) string {
	if i := slices.Index(words, flag); i >= 0 && i+1 < len(words) {
		return words[i+1]
	}
	return ""
}

func jsonArray(t *testing.T, s string) []string {
	t.Helper()
	var a []string
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatalf("%q is not a JSON array (exec form): %v", s, err)
	}
	return a
}

func jsonOrFields(t *testing.T, s string) []string {
	if strings.HasPrefix(s, "[") {
		return jsonArray(t, s)
	}
	return strings.Fields(s)
}

// rootfsConfig is build/rootfs.sh --print-config.
func rootfsConfig(t *testing.T) map[string]string {
	t.Helper()
	r := runScript(t, []string{"PATH=/usr/bin:/bin"}, "build/rootfs.sh", "--print-config")
	if r.err != nil {
		t.Fatalf("build/rootfs.sh --print-config: %v\n%s", r.err, r.stderr)
	}
	return keyValues(t, r.stdout)
}

// TestDockerfileAndRootfsAgree: the facts build/rootfs.sh builds its
// directory from are the Dockerfile's, so the filesystem the chroot test
// starts the server in is the image's.
func TestDockerfileAndRootfsAgree(t *testing.T) {
	img := readDockerfile(t)
	cfg := rootfsConfig(t)
	goVersion, _ := pinnedGo(t)
	_, port, err := net.SplitHostPort(cfg["ADDR"])
	if err != nil {
		t.Fatalf("build/rootfs.sh's ADDR %q: %v", cfg["ADDR"], err)
	}
	pkgs := strings.Fields(cfg["PACKAGES"])
	slices.Sort(pkgs)
	gotPkgs := slices.Sorted(slices.Values(img.packages))
	if !slices.Equal(gotPkgs, pkgs) {
		t.Errorf("the image installs %q, build/rootfs.sh copies %q", gotPkgs, pkgs)
	}
	checks := []struct{ what, dockerfile, rootfs string }{
		{"Go version (ARG GO_VERSION, build/go.sh)", img.args["GO_VERSION"], goVersion},
		{"build stage base", img.buildFrom, "golang:${GO_VERSION}-${DEBIAN_RELEASE}"},
		{"final stage base: the build stage's Debian", img.finalFrom, "debian:${DEBIAN_RELEASE}-slim"},
		{"USER", img.user, cfg["USER_NAME"]},
		{"useradd --uid", img.userID, cfg["USER_ID"]},
		{"useradd --gid", img.groupID, cfg["GROUP_ID"]},
		{"groupadd --gid", img.groupAddID, cfg["GROUP_ID"]},
		{"owner of the data directory", img.dataOwner, cfg["USER_ID"] + ":" + cfg["GROUP_ID"] + " " + cfg["DATA_DIR"]},
		{"ENV WAGRAPH_DATA_DIR", img.env["WAGRAPH_DATA_DIR"], cfg["DATA_DIR"]},
		{"VOLUME", strings.Join(img.volumes, " "), cfg["DATA_DIR"]},
		{"ENV WAGRAPH_ADDR", img.env["WAGRAPH_ADDR"], cfg["ADDR"]},
		{"EXPOSE", strings.Join(img.expose, " "), port},
		{"COPY --from", img.copyFrom, img.buildStage},
		{"the binary's place", img.copyDest, cfg["BIN_PATH"]},
		{"ENTRYPOINT", strings.Join(img.entrypoint, " "), path.Base(cfg["BIN_PATH"])},
		{"CMD", strings.Join(img.cmd, " "), "serve"},
	}
	for _, c := range checks {
		if c.dockerfile != c.rootfs {
			t.Errorf("%s: the Dockerfile says %q, build/rootfs.sh (or the repository) %q", c.what, c.dockerfile, c.rootfs)
		}
	}
	if !slices.Contains(strings.Split(cfg["IMAGE_PATH"], ":"), path.Dir(cfg["BIN_PATH"])) {
		t.Errorf("%s is not on the image's PATH %s: ENTRYPOINT [\"wagraph\"] would not find it", cfg["BIN_PATH"], cfg["IMAGE_PATH"])
	}
	if !img.cgo || len(img.goBuild) < 3 || img.goBuild[len(img.goBuild)-1] != "./cmd/wagraph" || option(img.goBuild, "-o") != img.copySrc {
		t.Errorf("the build stage must run `CGO_ENABLED=1 go build … -o %s ./cmd/wagraph`; it runs go build %q (cgo %v)", img.copySrc, img.goBuild, img.cgo)
	}
	// The image's own command asks /readyz where serve listens with the
	// image's settings: no shell, no curl, no address of its own.
	if want := []string{path.Base(cfg["BIN_PATH"]), "healthcheck"}; !slices.Equal(img.healthcheck, want) {
		t.Errorf("HEALTHCHECK CMD %q, want %q (exec form)", img.healthcheck, want)
	}
}
