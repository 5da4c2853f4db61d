package packaging

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testclient"
)

// Bounds, not measurements: a slow machine may use all of them.
const (
	readyWithin = 90 * time.Second
	stopWithin  = 40 * time.Second // the image's documented stop grace
)

// TestImageFilesystemServes builds wagraph as the Dockerfile's build stage
// does, builds the final stage's filesystem with build/rootfs.sh, and runs
// the Dockerfile's ENTRYPOINT and CMD in it with chroot, as the image's
// user, with the image's environment (WAGRAPH_ADDR moved to a free port of
// the machine's own address, not loopback, as a server bound to one
// interface): /readyz must answer 200, the Dockerfile's HEALTHCHECK must
// pass in the same filesystem (and fail once the server is gone), ffmpeg
// must run there, and SIGTERM must end the server with status 0.
func TestImageFilesystemServes(t *testing.T) {
	if testing.Short() {
		t.Skip("the image's filesystem built and served from (about a minute): make test runs it, make test-short skips it")
	}
	img := readDockerfile(t)
	cfg := rootfsConfig(t)
	root := repoRoot(t)
	work := t.TempDir()

	binary := filepath.Join(work, "wagraph")
	args := []string{"build"}
	for i := 0; i < len(img.goBuild); i++ {
		if img.goBuild[i] == "-o" {
			args = append(args, "-o", binary)
			i++
			continue
		}
		args = append(args, img.goBuild[i])
	}
	build := exec.Command("go", args...)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	rootfs := filepath.Join(work, "rootfs")
	if r := runScript(t, []string{"PATH=" + os.Getenv("PATH")}, "build/rootfs.sh", binary, rootfs); r.err != nil {
		t.Fatalf("build/rootfs.sh: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	uid, gid := atoi(t, cfg["USER_ID"]), atoi(t, cfg["GROUP_ID"])
	as := imageUser(t, uid, gid)
	runtimeDevices(t, rootfs)

	host := testclient.MachineAddress(t)
	port := freePort(t, host)
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	env := []string{"PATH=" + cfg["IMAGE_PATH"], "HOME=" + cfg["DATA_DIR"]}
	for k, v := range img.env {
		if k == "WAGRAPH_ADDR" {
			v = addr
		}
		env = append(env, k+"="+v)
	}

	t.Run("ffmpeg runs in the image", func(t *testing.T) {
		if out, err := inImage(rootfs, as, env, "/usr/bin/ffmpeg", "-hide_banner", "-version").CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg -version in the image: %v\n%s", err, out)
		}
	})

	entry := lookInImage(t, rootfs, cfg["IMAGE_PATH"], img.entrypoint[0])
	logPath := filepath.Join(work, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	server := inImage(rootfs, as, env, entry, append(img.entrypoint[1:], img.cmd...)...)
	server.Stdout, server.Stderr = logFile, logFile
	if err := server.Start(); err != nil {
		t.Fatalf("starting %s %q in %s: %v", entry, img.cmd, rootfs, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = server.Process.Kill()
			<-exited
		}
	})
	serverLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }

	if err := waitReady(t, "http://"+addr+cfg["HEALTHCHECK_PATH"], exited); err != nil {
		t.Fatalf("%v\nserver log:\n%s", err, serverLog())
	}
	if got := processUID(t, server.Process.Pid); got != as.hostUID {
		t.Errorf("the server runs as uid %d, want %d (the image's user %s)", got, as.hostUID, cfg["USER_NAME"])
	}
	healthcheck := func() ([]byte, error) {
		return inImage(rootfs, as, env, lookInImage(t, rootfs, cfg["IMAGE_PATH"], img.healthcheck[0]), img.healthcheck[1:]...).CombinedOutput()
	}
	if out, err := healthcheck(); err != nil {
		t.Errorf("the Dockerfile's HEALTHCHECK fails against the ready server on %s: %v\n%s", addr, err, out)
	}
	stored, err := os.ReadDir(filepath.Join(rootfs, cfg["DATA_DIR"]))
	if err != nil || len(stored) == 0 {
		t.Errorf("nothing stored in %s of the image (%v)", cfg["DATA_DIR"], err)
	}
	for _, e := range stored {
		fi, err := os.Stat(filepath.Join(rootfs, cfg["DATA_DIR"], e.Name()))
		if err == nil && int(fi.Sys().(*syscall.Stat_t).Uid) != as.hostUID {
			t.Errorf("%s/%s belongs to uid %d, not the image's user", cfg["DATA_DIR"], e.Name(), fi.Sys().(*syscall.Stat_t).Uid)
		}
	}

	if err := server.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("after SIGTERM the server ended with %v\nserver log:\n%s", err, serverLog())
		}
	case <-time.After(stopWithin):
		t.Fatalf("the server did not stop within %s of SIGTERM\nserver log:\n%s", stopWithin, serverLog())
	}
	if out, err := healthcheck(); err == nil {
		t.Errorf("the HEALTHCHECK passes with the server gone: it checks nothing\n%s", out)
	}
}

// user is who runs in the image: its uid and gid there, and the uid the
// host sees.
type user struct {
	uid, gid, hostUID int
	userns            bool
}

// imageUser: as root (CI), the image's uid and gid themselves; otherwise
// a user namespace that maps the caller to them (build/rootfs.sh then left
// the data directory to the caller).
func imageUser(t *testing.T, uid, gid int) user {
	t.Helper()
	if os.Geteuid() == 0 {
		return user{uid: uid, gid: gid, hostUID: uid}
	}
	return user{uid: uid, gid: gid, hostUID: os.Geteuid(), userns: true}
}

// runtimeDevices gives rootfs the /dev a container runtime mounts (images
// hold no devices): null, zero, random, urandom. Making device nodes needs
// root; otherwise the server runs without a /dev, which it does not need to
// start, serve and stop.
func runtimeDevices(t *testing.T, rootfs string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	dev := filepath.Join(rootfs, "dev")
	if err := os.Mkdir(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, minor := range map[string]int{"null": 3, "zero": 5, "random": 8, "urandom": 9} {
		// Major 1 (memory devices); minors below 256 encode as major<<8|minor.
		if err := syscall.Mknod(filepath.Join(dev, name), syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
			t.Fatalf("mknod /dev/%s in the image: %v", name, err)
		}
		if err := os.Chmod(filepath.Join(dev, name), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// inImage is a command run in rootfs with chroot as u, with exactly env.
// name is a path inside rootfs.
func inImage(rootfs string, u user, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = "/"
	attr := &syscall.SysProcAttr{
		Chroot:     rootfs,
		Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid), Groups: []uint32{}},
	}
	if u.userns {
		attr.Cloneflags = syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: u.uid, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: u.gid, HostID: os.Getegid(), Size: 1}}
		attr.Credential.NoSetGroups = true
	}
	cmd.SysProcAttr = attr
	return cmd
}

// lookInImage finds name on the image's PATH inside rootfs, as the
// container's runtime would for ENTRYPOINT.
func lookInImage(t *testing.T, rootfs, imagePath, name string) string {
	t.Helper()
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range strings.Split(imagePath, ":") {
		p := path.Join(dir, name)
		if fi, err := os.Stat(filepath.Join(rootfs, p)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Fatalf("ENTRYPOINT %q is on no directory of the image's PATH %s", name, imagePath)
	return ""
}

// waitReady polls url until it answers 200, the server exits, or
// readyWithin passes.
func waitReady(t *testing.T, url string, exited <-chan error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyWithin)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	last := "no answer"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the server exited (%v) before %s answered 200", err, url)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer 200 within %s (last: %s)", url, readyWithin, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// processUID is the real uid of a running process, from /proc.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return atoi(t, strings.Fields(rest)[0])
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// freePort is a port of host free a moment ago.
func freePort(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
