package datadir_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/datadir"
)

// TestAcquire: the first holder gets the lock (the directory is created,
// its pid written); a second open of the same lock, even in the same
// process, is refused with the holder's pid; after Release the next one
// gets it. Holder sees each state without taking the lock from anyone.
func TestAcquire(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	if pid, held, err := datadir.Holder(dir, datadir.ServerLock); err != nil || held || pid != 0 {
		t.Errorf("Holder of a missing directory: %d %v %v, want free", pid, held, err)
	}
	first, err := datadir.Acquire(dir, datadir.ServerLock, "wagraph")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory %v %v, want created 0700", fi, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, datadir.ServerLock))
	if err != nil || string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("lock file holds %q (%v), want this pid", b, err)
	}
	if pid, held, err := datadir.Holder(dir, datadir.ServerLock); err != nil || !held || pid != os.Getpid() {
		t.Errorf("Holder: %d %v %v, want held by %d", pid, held, err, os.Getpid())
	}

	_, err = datadir.Acquire(dir, datadir.ServerLock, "wagraph")
	var inUse *datadir.InUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v, want an InUseError naming pid %d", err, os.Getpid())
	}
	if want := "data directory " + dir + " is in use by another wagraph (pid " + strconv.Itoa(os.Getpid()) + ")"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// Another lock file of the same directory is another lock.
	network, err := datadir.Acquire(dir, datadir.NetworkLock, "wagraph sandbox-network")
	if err != nil {
		t.Fatalf("the network lock beside the server's: %v", err)
	}
	network.Release()

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if _, held, _ := datadir.Holder(dir, datadir.ServerLock); held {
		t.Error("Holder after Release: still held")
	}
	again, err := datadir.Acquire(dir, datadir.ServerLock, "wagraph")
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}

// TestUnusableDirectories: a directory that cannot be used is reported by
// Prepare, Check and Acquire with its cause and what to do; Check creates
// nothing.
func TestUnusableDirectories(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "data"), filepath.Join(file, "a", "b")} {
		for name, f := range map[string]func(string) error{
			"Prepare": datadir.Prepare,
			"Check":   func(d string) error { _, err := datadir.Check(d); return err },
			"Acquire": func(d string) error { _, err := datadir.Acquire(d, datadir.ServerLock, "wagraph"); return err },
		} {
			err := f(dir)
			var ae *datadir.AccessError
			if !errors.As(err, &ae) || ae.Dir != dir {
				t.Errorf("%s(%s): %v, want an AccessError of the directory", name, dir, err)
				continue
			}
			for _, want := range []string{"data directory " + dir + " is not a directory", "choose another --data-dir"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s(%s): %q does not say %q", name, dir, err, want)
				}
			}
		}
	}

	missing := filepath.Join(base, "x", "y")
	if exists, err := datadir.Check(missing); exists || err != nil {
		t.Errorf("Check of a creatable directory: %v %v, want not existing, no error", exists, err)
	}
	if _, err := os.Stat(filepath.Join(base, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check created something: %v", err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 1 {
		t.Errorf("Check left files behind: %v", entries)
	}
}

// The messages of the causes people meet, whoever runs the test: the
// permission one carries the advice.
func TestAccessErrorText(t *testing.T) {
	err := &datadir.AccessError{Dir: "./data", Op: "cannot create a file in it",
		Err: &fs.PathError{Op: "open", Path: "./data/.wagraph-probe-1", Err: fs.ErrPermission}}
	for _, want := range []string{"data directory ./data is not writable by uid ", "cannot create a file in it: permission denied",
		"chown it to the user running wagraph (chown -R ", "or choose another --data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("the cause is not kept")
	}
}

// TestAccessErrorAdvice: a refusal names who owns the directory and gives
// the fixes as commands with the uids filled in: chown it to this
// process's uid, or run as its owner (not when that is root), or, for a
// directory still to be created, create it for this uid.
func TestAccessErrorAdvice(t *testing.T) {
	uid, gid := os.Geteuid(), os.Getegid()
	denied := &fs.PathError{Op: "open", Path: "/data/.wagraph-probe-1", Err: fs.ErrPermission}
	cases := []struct {
		name      string
		owner     *datadir.Owner
		want, not []string
	}{
		{"a bind mount of the host's user", &datadir.Owner{Path: "/data", UID: 4242, GID: 4243, Mode: fs.ModeDir | 0o755},
			[]string{"it belongs to uid 4242 (gid 4243, drwxr-xr-x)", fmt.Sprintf("chown -R %d:%d /data", uid, gid), "docker run --user 4242:4243", "or choose another --data-dir"}, nil},
		{"root's directory", &datadir.Owner{Path: "/data", UID: 0, GID: 0, Mode: fs.ModeDir | 0o755},
			[]string{"it belongs to uid 0 (gid 0, drwxr-xr-x)", fmt.Sprintf("chown -R %d:%d /data", uid, gid)}, []string{"--user"}},
		{"a parent it would be created in", &datadir.Owner{Path: "/srv", UID: 0, GID: 0, Mode: fs.ModeDir | 0o755},
			[]string{"/srv, where it would be created, belongs to uid 0", fmt.Sprintf("mkdir -p /data && chown %d:%d /data", uid, gid)}, []string{"--user"}},
		{"owner unknown", nil, []string{fmt.Sprintf("chown it to the user running wagraph (chown -R %d:%d /data)", uid, gid)}, []string{"belongs to"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := (&datadir.AccessError{Dir: "/data", Op: "cannot create a file in it", Err: denied, Owner: c.owner}).Error()
			want := append([]string{fmt.Sprintf("data directory /data is not writable by uid %d (gid %d): cannot create a file in it: permission denied; ", uid, gid)}, c.want...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q says %q", msg, n)
				}
			}
		})
	}
}
