package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
)

// nobody is the unprivileged user the unwritable-directory tests run
// wagraph as: the tests run as root, who may write anywhere.
const nobody = 65534

// unwritableDir is a directory that exists, is root's and 0755: nobody
// reaches it but cannot create anything in it. Its parents are opened to
// nobody too, so what nobody meets is the directory's own permission.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test runs wagraph as another user, which needs root (the tests run as root)")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAsNobody runs the built wagraph with args as the user nobody and
// returns its exit status and output.
func runAsNobody(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runAs(t, nobody, nobody, args...)
}

// runAs runs the built wagraph with args as uid and gid and returns its
// exit status and output.
func runAs(t *testing.T, uid, gid uint32, args ...string) (int, string, string) {
	t.Helper()
	bin := wagraphBinary(t) // before the deadline: the first build takes a while
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("run %v as uid %d: %v", args, uid, err)
	}
	return 0, stdout.String(), stderr.String()
}

// advice is what the refusal of a data directory says to do, whatever the
// uids.
var advice = []string{"chown it to the user running wagraph (chown -R ", "or choose another --data-dir"}

// TestDoctorUnwritableDataDir: doctor, run as a user who may not write in
// the data directory, fails its data directory check saying permission
// denied and what to do, and exits 1.
func TestDoctorUnwritableDataDir(t *testing.T) {
	dir := unwritableDir(t)
	code, stdout, stderr := runAsNobody(t, "doctor", "--data-dir", dir, "--addr", "127.0.0.1:0", "--wa-version", "builtin")
	if code != 1 {
		t.Errorf("doctor exited %d, want 1; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "FAIL  data directory ") {
			line = l
		}
	}
	for _, want := range append([]string{dir, "permission denied", fmt.Sprint(nobody)}, advice...) {
		if !strings.Contains(line, want) {
			t.Errorf("the data directory line %q does not say %q; stdout:\n%s", line, want, stdout)
		}
	}
}

// TestServeUnwritableDataDir: serve says the real cause of a data
// directory it cannot write in (not SQLite's "no such file or directory")
// and what to do, and exits 1.
func TestServeUnwritableDataDir(t *testing.T) {
	dir := unwritableDir(t)
	code, stdout, stderr := runAsNobody(t, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0")
	if code != 1 {
		t.Errorf("serve exited %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range append([]string{"data directory " + dir + " is not writable", "permission denied"}, advice...) {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "no such file or directory") || stdout != "" {
		t.Errorf("stdout %q, stderr:\n%s", stdout, stderr)
	}
}

// TestServeBindMountOfAnotherUser: the container's case. The image runs
// wagraph as uid 10001; a host directory bind-mounted on /data belongs to
// the host's user (1000 here) and is 0755, so the server cannot write in
// it. It exits 1 naming both uids and the two fixes as commands: chown the
// directory to 10001, or run the container as its owner.
func TestServeBindMountOfAnotherUser(t *testing.T) {
	const imageUID, hostUID = 10001, 1000
	dir := unwritableDir(t)
	if err := os.Chown(dir, hostUID, hostUID); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runAs(t, imageUID, imageUID, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0")
	if code != 1 {
		t.Errorf("serve exited %d, want 1; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"data directory " + dir + " is not writable by uid 10001 (gid 10001)",
		"permission denied",
		"it belongs to uid 1000 (gid 1000, drwxr-xr-x)",
		"chown -R 10001:10001 " + dir,
		"docker run --user 1000:1000",
		"or choose another --data-dir",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("stdout %q", stdout)
	}
}

// TestDoctorGoodDataDir: on a directory serve can use, every check is OK
// (the WhatsApp Web version lookup may WARN: these tests run offline) and
// doctor exits 0. With a server running on it, doctor names that server's
// pid, reads its database, and still exits 0.
func TestDoctorGoodDataDir(t *testing.T) {
	store := storeArgs(t)
	dir := filepath.Join(store[1], "data") // created by serve below
	store[1] = dir
	args := append([]string{"doctor", "--addr", "127.0.0.1:0"}, store...)

	var stdout, stderr logtest.Buffer
	if code := run(context.Background(), args, noEnv, &stdout, &stderr); code != 0 {
		t.Errorf("doctor exited %d, want 0; stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 9 {
		t.Errorf("%d lines, want one per check (9):\n%s", len(lines), stdout.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "OK ") && !strings.HasPrefix(l, "WARN  WhatsApp Web version ") {
			t.Errorf("not OK: %q", l)
		}
	}

	// The server and doctor both in sandbox mode: the data directory is
	// used, and held, on either backend.
	startServer(t, nil, append([]string{"--sandbox", "--addr", "127.0.0.1:0"}, store...)...)
	stdout, stderr = logtest.Buffer{}, logtest.Buffer{}
	if code := run(context.Background(), append(args, "--sandbox"), noEnv, &stdout, &stderr); code != 0 {
		t.Errorf("doctor beside a server exited %d, want 0; stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	// The server made the local store; with --database-url there is none by default.
	kept := "OK    media store          local " + filepath.Join(dir, "media") + ": writable"
	if len(store) > 2 {
		kept = "OK    media store          skipped: --media-store none"
	}
	for _, want := range []string{
		fmt.Sprintf("WARN  data directory lock  %s is in use by a running wagraph (pid %d)", dir, os.Getpid()),
		"OK    data directory       " + dir + " exists",
		"schema reachable (1 users, 0 sessions)", // the server's admin
		kept,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor beside a server does not say %q:\n%s", want, out)
		}
	}
}

// TestDataDirFilesArePrivate (issue 31): under umask 022, on a data
// directory made beforehand 0755, serve keeps every file 0600 (SQLite made
// its databases and their -wal and -shm 0644: the device keys readable by
// every user). A device store left 0644 (by an earlier version) is a
// FAIL of doctor naming it and the fix, and the next serve makes it
// private at start, saying so.
func TestDataDirFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The SQLite pass's storage whatever the run's backend: the files are
	// the subject.
	args := []string{"--sandbox", "--addr", "127.0.0.1:0", "--data-dir", dir}
	s := startServer(t, nil, args...)
	if code := waitStatus(t, s.client, "http://"+s.addr+"/readyz", http.StatusOK); code != http.StatusOK {
		t.Fatalf("/readyz %d", code)
	}
	databases := []string{"wagraph.db", "wagraph.db-wal", "wagraph.db-shm", "whatsmeow.db", "whatsmeow.db-wal", "whatsmeow.db-shm"}
	for _, name := range databases {
		if mode, err := permOf(filepath.Join(dir, name)); err != nil || mode != 0o600 {
			t.Errorf("%s: mode %04o (%v), want 0600", name, mode, err)
		}
	}
	privateFiles := func(when string) {
		t.Helper()
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %s has mode %04o, want no access for others", when, path, fi.Mode().Perm())
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	privateFiles("while serving")
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, s.stderr.String())
	}
	privateFiles("once stopped")

	store := filepath.Join(dir, "whatsmeow.db")
	if err := os.Chmod(store, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr logtest.Buffer
	code := run(context.Background(), append([]string{"doctor", "--ffmpeg", "none"}, args...), noEnv, &stdout, &stderr)
	want := "FAIL  private files        " + store + " (the WhatsApp device store: each linked device's keys) has mode 0644"
	if code != 1 || !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "chmod go-rwx "+store) {
		t.Errorf("doctor on a readable device store: exit %d, want 1 and a line starting %q naming chmod go-rwx %s:\n%s", code, want, store, stdout.String())
	}

	s = startServer(t, nil, args...)
	if mode, err := permOf(store); err != nil || mode != 0o600 {
		t.Errorf("after a restart %s: mode %04o (%v), want 0600", store, mode, err)
	}
	if !strings.Contains(s.stderr.String(), "made private\" file="+store+" mode_was=0644 mode=0600") {
		t.Errorf("serve did not say it made %s private:\n%s", store, s.stderr.String())
	}
}

func permOf(path string) (fs.FileMode, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}
