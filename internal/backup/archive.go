package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wagraph/wagraph/internal/datadir"
)

// entry is one entry of an archive: a file or a directory, by its
// slash-separated path in the data directory.
type entry struct {
	name string
	dir  bool
}

// Modes of what an archive holds and a restore writes: the data directory
// holds every device's keys, for its owner only.
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// writeArchive packs the entries, staged under stage, into a new tar.gz at
// dest (named path to the caller): written to a temporary file beside it,
// synced, then linked into place so that dest appears whole or not at all
// and an existing file is never replaced. It returns the archive's size.
func writeArchive(ctx context.Context, stage string, entries []entry, dest, path string) (int64, error) {
	dir, base := filepath.Split(dest)
	f, err := os.CreateTemp(dir, base+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("create the backup file beside %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // linked into place by then, or abandoned
	defer f.Close()
	// The fastest level: a backup shares the machine with the server, and
	// on SQLite pages it compresses nearly as well as the default.
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	tw := tar.NewWriter(zw)
	now := time.Now().Truncate(time.Second)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := addEntry(tw, stage, e, now); err != nil {
			return 0, fmt.Errorf("write %s into %s: %w", e.name, path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := place(tmp, dest, path); err != nil {
		return 0, err
	}
	if err := datadir.SyncDir(dir); err != nil {
		return 0, fmt.Errorf("sync the directory of %s: %w", path, err)
	}
	return fi.Size(), nil
}

func addEntry(tw *tar.Writer, stage string, e entry, now time.Time) error {
	if e.dir {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e.name + "/", Mode: dirMode, ModTime: now})
	}
	in, err := os.Open(filepath.Join(stage, filepath.FromSlash(e.name)))
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: fileMode, Size: fi.Size(), ModTime: now}); err != nil {
		return err
	}
	_, err = io.Copy(tw, in)
	return err
}

// place gives the finished file tmp its name dest, never over an existing
// file: a hard link fails when dest exists, where a rename would replace
// it. A file system without hard links gets a check, then a rename.
func place(tmp, dest, path string) error {
	err := os.Link(tmp, dest)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup file %s: %w (it appeared while the backup ran): choose a new name", path, fs.ErrExist)
	}
	if _, lerr := os.Lstat(dest); lerr == nil {
		return fmt.Errorf("backup file %s: %w (it appeared while the backup ran): choose a new name", path, fs.ErrExist)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("name the backup file %s: %w", path, err)
	}
	return nil
}
