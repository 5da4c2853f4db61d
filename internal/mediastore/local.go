package mediastore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// Info describes a kept file.
type Info struct {
	// SHA256 is the hex SHA-256 of the file's bytes: its name.
	SHA256  string
	Size    int64
	ModTime time.Time
}

// Object is a kept file opened for reading: seekable, so that the media
// route serves Range requests from it without holding it in memory.
type Object interface {
	io.ReadSeekCloser
}

// Local keeps files in a directory (the data directory's media/), two
// levels deep by the name's first two bytes so that no directory grows
// past a few thousand entries. A file is written aside (a ".tmp-" name,
// which a backup leaves out) and renamed into place once whole and
// synced: a crash never leaves a half file under a content name.
type Local struct {
	dir string
}

// NewLocal returns a store of files under dir, created (0700) if missing.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("media store %s: %w", dir, err)
	}
	return &Local{dir: dir}, nil
}

// Dir is the directory the store keeps its files in.
func (l *Local) Dir() string { return l.dir }

func (l *Local) path(sum string) string {
	return filepath.Join(l.dir, sum[:2], sum[2:4], sum)
}

// Put reads r to its end and keeps its bytes under their SHA-256; bytes
// already kept are not written again (the file's time is renewed, so
// that retention counts from the newest use).
func (l *Local) Put(ctx context.Context, r io.Reader) (Info, error) {
	tmp, err := os.CreateTemp(l.dir, ".tmp-put-*")
	if err != nil {
		return Info{}, fmt.Errorf("media store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), readerCtx{ctx, r})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("media store: write: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	dst := l.path(sum)
	now := time.Now()
	if st, err := os.Stat(dst); err == nil && st.Size() == n {
		_ = os.Chtimes(dst, now, now)
		return Info{SHA256: sum, Size: n, ModTime: now}, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return Info{}, fmt.Errorf("media store: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Info{}, fmt.Errorf("media store: %w", err)
	}
	return Info{SHA256: sum, Size: n, ModTime: now}, nil
}

// Open opens the file kept under sum; NOT_FOUND when there is none.
func (l *Local) Open(ctx context.Context, sum string) (Object, Info, error) {
	if !validSum(sum) {
		return nil, Info{}, fault.New(fault.NotFound, "no kept media %q", sum)
	}
	f, err := os.Open(l.path(sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Info{}, fault.New(fault.NotFound, "no kept media %s", sum)
	}
	if err != nil {
		return nil, Info{}, fmt.Errorf("media store: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, fmt.Errorf("media store: %w", err)
	}
	return f, Info{SHA256: sum, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// Delete removes the file kept under sum; one already gone is no error.
func (l *Local) Delete(ctx context.Context, sum string) error {
	if !validSum(sum) {
		return nil
	}
	if err := os.Remove(l.path(sum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("media store: %w", err)
	}
	return nil
}

// Walk calls fn for each kept file, in no particular order, until fn
// returns an error (returned) or the files end.
func (l *Local) Walk(ctx context.Context, fn func(Info) error) error {
	return filepath.WalkDir(l.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !validSum(d.Name()) {
			return nil
		}
		st, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while walking
		}
		if err != nil {
			return err
		}
		return fn(Info{SHA256: d.Name(), Size: st.Size(), ModTime: st.ModTime()})
	})
}

// validSum reports whether s is a hex SHA-256 in lower case: the only
// names a store reads, so that no name reaches outside its directory.
func validSum(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// readerCtx stops a copy when its context ends (a download the client
// left, a server stopping).
type readerCtx struct {
	ctx context.Context
	r   io.Reader
}

func (r readerCtx) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// Check writes a small probe beside the files (a ".tmp-" name, which
// nothing else reads and a backup leaves out), reads it back and deletes
// it: the directory takes files and gives them back (`wagraph doctor`),
// and is left as it was (a probe put as a kept file would leave its
// directories behind).
func (l *Local) Check(ctx context.Context) error {
	probe := make([]byte, 64)
	rand.Read(probe)
	f, err := os.CreateTemp(l.dir, ".tmp-check-*")
	if err != nil {
		return fmt.Errorf("media store %s: write a probe: %w", l.dir, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(probe)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("media store %s: write a probe: %w", l.dir, err)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		return fmt.Errorf("media store %s: read the probe back: %w", l.dir, err)
	}
	if !bytes.Equal(got, probe) {
		return fmt.Errorf("media store %s: the probe read back is not what was written", l.dir)
	}
	if err := os.Remove(f.Name()); err != nil {
		return fmt.Errorf("media store %s: delete the probe: %w", l.dir, err)
	}
	return nil
}

// String names the store.
func (l *Local) String() string { return "local " + l.dir }
