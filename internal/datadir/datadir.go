// Package datadir guards a data directory: one process at a time holds it
// (an exclusive lock on a file in it, with the holder's pid written there),
// and a directory that cannot be written is reported with its real cause
// and what to do, before anything opens a database in it; one that will
// not outlive its container (an anonymous volume, the container's own
// file system, memory) is told apart, for the server to say so.
//
// Two servers on one directory corrupt each other (each takes the other's
// sessions and pending deliveries), so the second must stop at once rather
// than start half-working.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The lock files: one server per directory, and, separately, one
// simulated network (`wagraph sandbox-network` may share a directory with
// the server that uses it).
const (
	ServerLock  = "wagraph.lock"
	NetworkLock = "sandbox-network.lock"
)

// InUseError is a directory whose lock another process holds.
type InUseError struct {
	Dir string // as given
	Who string // "wagraph", "wagraph sandbox-network"
	PID int    // 0 when the holder has not written it yet
}

func (e *InUseError) Error() string {
	pid := "pid unknown"
	if e.PID > 0 {
		pid = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("data directory %s is in use by another %s (%s)", e.Dir, e.Who, pid)
}

// AccessError is a data directory that cannot be created or written, with
// the operating system's cause and what to do about it.
type AccessError struct {
	Dir string
	Op  string // what failed, such as "create a file in it"
	Err error  // the cause, such as fs.ErrPermission
	// Owner is who owns the directory that refused: Dir, or the parent
	// Dir would be created in; nil when unknown. A refusal is most often
	// a directory of another uid (a container's user, 10001 in wagraph's
	// image, on a bind-mounted directory of the host's user), and the
	// fix names both uids.
	Owner *Owner
}

// Owner is a directory's owner and mode.
type Owner struct {
	Path     string
	UID, GID int
	Mode     fs.FileMode
}

// ownerOf is path's owner, nil when it cannot be read.
func ownerOf(path string) *Owner {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &Owner{Path: path, UID: int(st.Uid), GID: int(st.Gid), Mode: fi.Mode()}
}

// accessError is the AccessError of dir, with the owner of at (dir or
// the parent it would be created in) when the cause is a permission.
func accessError(dir, op, at string, err error) *AccessError {
	e := &AccessError{Dir: dir, Op: op, Err: err}
	if errors.Is(err, fs.ErrPermission) {
		e.Owner = ownerOf(at)
	}
	return e
}

func (e *AccessError) Error() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // the path is Dir's, or a file of it named by Op
	}
	switch {
	case errors.Is(e.Err, fs.ErrPermission):
		return fmt.Sprintf("data directory %s is not writable by uid %d (gid %d): %s: %v; %s", e.Dir, os.Geteuid(), os.Getegid(), e.Op, cause, e.advice())
	case errors.Is(e.Err, syscall.EROFS):
		return fmt.Sprintf("data directory %s is on a read-only file system (%s: %v); choose another --data-dir", e.Dir, e.Op, cause)
	case errors.Is(e.Err, syscall.ENOTDIR):
		return fmt.Sprintf("data directory %s is not a directory, or is under a file (%s: %v); choose another --data-dir", e.Dir, e.Op, cause)
	case errors.Is(e.Err, syscall.ENOSPC):
		return fmt.Sprintf("data directory %s: no space left on the device (%s: %v); free some space or choose another --data-dir", e.Dir, e.Op, cause)
	}
	return fmt.Sprintf("data directory %s cannot be used: %s: %v; %s", e.Dir, e.Op, cause, e.advice())
}

// advice is what to do about a directory this process may not write in,
// as commands: make it this uid's, or run as its owner (not root), or
// choose another.
func (e *AccessError) advice() string {
	uid, gid := os.Geteuid(), os.Getegid()
	o := e.Owner
	switch {
	case o == nil:
		return fmt.Sprintf("chown it to the user running wagraph (chown -R %d:%d %s) or choose another --data-dir", uid, gid, e.Dir)
	case filepath.Clean(o.Path) != filepath.Clean(e.Dir):
		return fmt.Sprintf("%s, where it would be created, belongs to uid %d (gid %d, %s): create it for the user running wagraph (mkdir -p %s && chown %d:%d %s) or choose another --data-dir",
			o.Path, o.UID, o.GID, o.Mode, e.Dir, uid, gid, e.Dir)
	}
	s := fmt.Sprintf("it belongs to uid %d (gid %d, %s): chown it to the user running wagraph (chown -R %d:%d %s, or the host's directory of a container's bind mount)",
		o.UID, o.GID, o.Mode, uid, gid, e.Dir)
	if o.UID != 0 && o.UID != uid {
		s += fmt.Sprintf(", or run wagraph as its owner (in a container: docker run --user %d:%d …)", o.UID, o.GID)
	}
	return s + ", or choose another --data-dir"
}

func (e *AccessError) Unwrap() error { return e.Err }

// Prepare creates dir (0700) when it is missing and checks that this
// process can create files in it, by creating one: what SQLite needs, and
// what its own errors report as "no such file or directory".
func Prepare(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return accessError(dir, "cannot create it", nearestExisting(dir), err)
	}
	return probe(dir)
}

// probe creates and removes a file in dir.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, ".wagraph-probe-*")
	if err != nil {
		return accessError(dir, "cannot create a file in it", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return accessError(dir, "cannot remove a file from it", dir, err)
	}
	return nil
}

// Check says whether dir could be used, changing nothing: an existing
// directory must take a new file (one is created and removed), a missing
// one must be creatable in its nearest existing parent. exists reports
// which of the two it was.
func Check(dir string) (exists bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return true, &AccessError{Dir: dir, Op: "it is a file", Err: syscall.ENOTDIR}
	case err == nil:
		return true, probe(dir)
	case !errors.Is(err, fs.ErrNotExist):
		return false, &AccessError{Dir: dir, Op: "cannot look at it", Err: err}
	}
	parent := filepath.Clean(dir)
	for {
		next := filepath.Dir(parent)
		if next == parent {
			break
		}
		parent = next
		fi, err := os.Stat(parent)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, &AccessError{Dir: dir, Op: "cannot look at " + parent, Err: err}
		}
		if !fi.IsDir() {
			return false, &AccessError{Dir: dir, Op: parent + " is a file", Err: syscall.ENOTDIR}
		}
		break
	}
	if err := probe(parent); err != nil {
		var ae *AccessError
		if errors.As(err, &ae) {
			ae.Dir, ae.Op = dir, "it does not exist, and it cannot be created in "+parent
		}
		return false, err
	}
	return false, nil
}

// nearestExisting is dir, or its nearest parent that exists: where a
// missing directory would be created.
func nearestExisting(dir string) string {
	p := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
		next := filepath.Dir(p)
		if next == p {
			return p
		}
		p = next
	}
}

// Lock is a held data directory lock. The operating system releases it
// when the process ends, however it ends.
type Lock struct {
	f *os.File
}

// acquireTries bounds how long Acquire waits for a lock held only for a
// moment (Holder's probe, from `wagraph doctor`): a real holder keeps it,
// and the second process still exits well within a second.
const (
	acquireTries = 5
	acquireWait  = 50 * time.Millisecond
)

// Acquire takes the lock file of dir (created with the directory when
// missing) for the life of the process, writing its pid in it; who names
// the holder in the error a second process gets (*InUseError). A directory
// this process cannot write is an *AccessError.
func Acquire(dir, lockFile, who string) (*Lock, error) {
	if err := Prepare(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, accessError(dir, "cannot open "+lockFile, dir, err)
	}
	for try := 1; ; try++ {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || try == acquireTries {
			break
		}
		time.Sleep(acquireWait)
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, &InUseError{Dir: dir, Who: who, PID: readPID(path)}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, accessError(dir, "cannot write "+lockFile, dir, err)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock back (the pid stays in the file: the next holder
// writes its own).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// Holder reports whether a process holds the lock file of dir, and its
// pid. It changes nothing: a missing directory or lock file is not held.
// It takes the lock for an instant to see whether it is free (a process
// starting at that very instant retries; see Acquire).
func Holder(dir, lockFile string) (pid int, held bool, err error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return readPID(path), true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return 0, false, nil
}

// readPID reads the holder's pid, waiting a moment for a holder that has
// just taken the lock to write it.
func readPID(path string) int {
	for range 10 {
		b, err := os.ReadFile(path)
		if err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// SyncDir makes a directory's entries durable: a file renamed into it (an
// atomic replace, a restored file) survives a crash of the machine only
// once the directory itself is synced.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
