package datadir

import (
	"os"
	"strings"
	"testing"
)

// Lines of /proc/self/mountinfo as containers and hosts have them.
const (
	hostRoot       = "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw"
	containerRoot  = "620 540 0:52 / / rw,relatime master:298 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A:/var/lib/docker/overlay2/l/B,upperdir=/var/lib/docker/overlay2/x/diff,workdir=/var/lib/docker/overlay2/x/work"
	anonymousData  = "641 620 254:1 /var/lib/docker/volumes/3f1c0b8e6a2d4c5b9e7f1a0d2c3b4a5968778695a4b3c2d1e0f1a2b3c4d5e6f7/_data /data rw,relatime master:1 - ext4 /dev/vda1 rw"
	podmanAnon     = "641 620 254:1 /home/u/.local/share/containers/storage/volumes/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/_data /data rw - xfs /dev/sda2 rw"
	namedData      = "641 620 254:1 /var/lib/docker/volumes/wagraph-data/_data /data rw,relatime master:1 - ext4 /dev/vda1 rw"
	bindData       = "641 620 254:1 /home/ana/wagraph /data rw,relatime - ext4 /dev/vda1 rw"
	tmpfsShm       = "29 23 0:26 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=65536k"
	spacedBindData = `641 620 254:1 /home/ana/my\040data /srv/my\040data rw,relatime - ext4 /dev/vda1 rw`
)

// TestTransientOn: the data directory's mount says whether what it holds
// outlives the container: an anonymous volume (docker run --rm deletes
// it), the container's own overlay and memory do not; a named volume, a
// bind mount and a host's disk do.
func TestTransientOn(t *testing.T) {
	cases := []struct {
		name      string
		mounts    []string
		dir       string
		container bool
		want      string // in On; "" for none
	}{
		{"a host's disk", []string{hostRoot}, "/home/ana/wagraph/data", false, ""},
		{"the image's /data as docker run --rm makes it", []string{containerRoot, anonymousData}, "/data", true, "an anonymous volume (/data): docker run --rm deletes it"},
		{"below an anonymous volume", []string{containerRoot, anonymousData}, "/data/sandbox", true, "an anonymous volume (/data)"},
		{"a Podman anonymous volume", []string{containerRoot, podmanAnon}, "/data", true, "an anonymous volume"},
		{"a named volume", []string{containerRoot, namedData}, "/data", true, ""},
		{"a bind mount", []string{containerRoot, bindData}, "/data", true, ""},
		{"a bind mount over an anonymous volume", []string{containerRoot, anonymousData, bindData}, "/data", true, ""},
		{"a directory beside the volume, in the container's layer", []string{containerRoot, anonymousData}, "/srv/data", true, "the container's own file system"},
		{"a data directory named like the volume's mount point", []string{containerRoot, anonymousData}, "/database", true, "the container's own file system"},
		{"an overlay root outside a container", []string{"1 0 0:1 / / rw - overlay overlay rw"}, "/srv/data", false, ""},
		{"memory", []string{hostRoot, tmpfsShm}, "/dev/shm/wagraph", false, "memory (tmpfs on /dev/shm)"},
		{"a path with a space", []string{containerRoot, spacedBindData}, "/srv/my data", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mounts []mount
			for _, l := range c.mounts {
				m, ok := parseMountInfoLine(l)
				if !ok {
					t.Fatalf("cannot read %q", l)
				}
				mounts = append(mounts, m)
			}
			got := transientOn(mounts, c.dir, c.container)
			switch {
			case c.want == "" && got != nil:
				t.Errorf("%s is said to be lost: %+v", c.dir, *got)
			case c.want != "" && got == nil:
				t.Errorf("%s is not said to be lost, want %q", c.dir, c.want)
			case c.want != "" && (!strings.Contains(got.On, c.want) || !strings.Contains(got.Keep, "docker run -v wagraph-data:"+c.dir+" ")):
				t.Errorf("%s: %+v, want %q and a volume on it to keep it", c.dir, *got, c.want)
			}
		})
	}
}

// TestTransientReadsThisMachine: /dev/shm, memory on every Linux, is said
// to be lost, from the real mount table.
func TestTransientReadsThisMachine(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "wagraph-lifetime-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	got, err := Transient(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || !strings.Contains(got.On, "memory (tmpfs") {
		t.Errorf("Transient(%s) = %+v, want memory (tmpfs)", dir, got)
	}
}
