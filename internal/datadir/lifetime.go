package datadir

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A data directory can be writable and still not keep anything: `docker
// run --rm wagraph serve --sandbox` writes the simulated network to the
// image's /data volume, an anonymous one that --rm deletes with the
// container, so each run starts a new world and its sessions must be
// linked again, with nothing saying so. Transient tells the server, which
// says it at start.

// Transience is why what a data directory holds will be lost, and what
// keeps it.
type Transience struct {
	On   string // what the directory is on, and when that goes
	Keep string // what to do to keep it
}

// Transient reads the mount table of this process: a nil Transience when
// nothing says dir is lost sooner than the disk it is on.
func Transient(dir string) (*Transience, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open("/proc/self/mountinfo")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // not Linux, or no /proc: nothing to tell
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts, err := readMountInfo(f)
	if err != nil {
		return nil, err
	}
	return transientOn(mounts, abs, inContainer()), nil
}

// inContainer: Docker and Podman leave a file at the root of their
// containers.
func inContainer() bool {
	for _, marker := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(marker); err == nil {
			return true
		}
	}
	return false
}

// mount is one line of /proc/self/mountinfo (proc(5)).
type mount struct {
	root   string // the path in its file system that is mounted
	point  string // where
	fstype string
}

func readMountInfo(f *os.File) ([]mount, error) {
	var mounts []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if m, ok := parseMountInfoLine(sc.Text()); ok {
			mounts = append(mounts, m)
		}
	}
	return mounts, sc.Err()
}

// parseMountInfoLine reads "36 35 98:0 /root /point opts [optional…] -
// fstype source superopts".
func parseMountInfoLine(line string) (mount, bool) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
		return mount{}, false
	}
	return mount{root: unescapeMount(f[3]), point: unescapeMount(f[4]), fstype: f[sep+1]}, true
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// anonymousVolume is the source path of a Docker or Podman volume created
// without a name: a 64-hex-digit id (.../volumes/<id>/_data).
var anonymousVolume = regexp.MustCompile(`(^|/)volumes/[0-9a-f]{64}/_data$`)

// transientOn says what becomes of dir (absolute, links resolved) on the
// mount that holds it: the last mounted of those whose mount point is the
// longest prefix of dir.
func transientOn(mounts []mount, dir string, container bool) *Transience {
	var on *mount
	for i := range mounts {
		m := &mounts[i]
		if !within(dir, m.point) {
			continue
		}
		if on == nil || len(m.point) >= len(on.point) {
			on = m
		}
	}
	if on == nil {
		return nil
	}
	volume := "mount a named volume or a host directory on " + dir + " (docker run -v wagraph-data:" + dir + " …)"
	switch {
	case on.fstype == "tmpfs" || on.fstype == "ramfs":
		return &Transience{
			On:   "memory (" + on.fstype + " on " + on.point + "): lost when it is unmounted: when the machine restarts, or the container stops",
			Keep: "choose a --data-dir on a disk (in a container: docker run -v wagraph-data:" + dir + " …)",
		}
	case anonymousVolume.MatchString(on.root):
		return &Transience{
			On:   "an anonymous volume (" + on.point + "): docker run --rm deletes it with the container, and every new container gets an empty one",
			Keep: volume,
		}
	case container && on.point == "/" && on.fstype == "overlay":
		return &Transience{
			On:   "the container's own file system: lost when the container is removed",
			Keep: volume,
		}
	}
	return nil
}

// within: path is point or below it.
func within(path, point string) bool {
	if point == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == point || strings.HasPrefix(path, point+"/")
}
