package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/mediastore"
)

// ProductDB is the database every SQLite data directory holds: a backup
// without it is no backup of a wagraph.
const ProductDB = datadir.ProductDB

// storeDB is whatsmeow's device store, listed second.
const storeDB = datadir.DeviceStore

// Summary says what a backup holds: what ToFile wrote, or what Restore
// unpacked.
type Summary struct {
	Archive      string // the archive, as the caller named it
	ArchiveBytes int64  // its size
	DataDir      string // the data directory copied or restored into
	Databases    []File // the SQLite databases, wagraph.db first
	Others       []File // the other files, as they were
	Restored     bool   // a Restore's summary (ToFile's when false)
}

// File is one file of a backup.
type File struct {
	Name  string // its path in the data directory, with forward slashes
	Bytes int64
}

// String says it in one line: "wrote backup.tar.gz (1.1 MiB): wagraph.db
// 1.2 MiB, whatsmeow.db 300 KiB, 12 kept media files 30 MiB, 1 other
// file".
func (s Summary) String() string {
	var parts []string
	for _, d := range s.Databases {
		parts = append(parts, d.Name+" "+byteSize(d.Bytes))
	}
	var others []File
	var media, mediaBytes int64
	for _, f := range s.Others {
		if strings.HasPrefix(f.Name, mediastore.DirName+"/") {
			media, mediaBytes = media+1, mediaBytes+f.Bytes
		} else {
			others = append(others, f)
		}
	}
	switch media {
	case 0:
	case 1:
		parts = append(parts, "1 kept media file "+byteSize(mediaBytes))
	default:
		parts = append(parts, fmt.Sprintf("%d kept media files %s", media, byteSize(mediaBytes)))
	}
	switch n := len(others); n {
	case 0:
	case 1:
		parts = append(parts, "1 other file")
	default:
		parts = append(parts, fmt.Sprintf("%d other files", n))
	}
	if s.Restored {
		return fmt.Sprintf("restored %s into %s: %s", s.Archive, s.DataDir, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("wrote %s (%s): %s", s.Archive, byteSize(s.ArchiveBytes), strings.Join(parts, ", "))
}

// byteSize writes n in binary units: "512 B", "4.0 KiB", "300 KiB", "1.2 MiB".
func byteSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// ToFile copies the SQLite data directory dataDir into a new archive at
// path (a gzip-compressed tar, the package doc's layout) while a server
// may be running on it, and says what it wrote. It refuses a path that
// exists or lies inside dataDir, and a directory without wagraph.db. A
// nil log discards.
func ToFile(ctx context.Context, dataDir, path string, log *slog.Logger) (Summary, error) {
	return toFile(ctx, dataDir, path, log, nil)
}

// toFile is ToFile; held, when set, is called while the read transaction
// over the databases is held, before anything is copied (tests write to
// the live databases there: the writes must go through and stay out).
func toFile(ctx context.Context, dataDir, path string, log *slog.Logger, held func()) (Summary, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	src, err := dataDirectory(dataDir)
	if err != nil {
		return Summary{}, err
	}
	dest, err := destination(src, dataDir, path)
	if err != nil {
		return Summary{}, err
	}
	dbs, others, err := scan(src, log)
	if err != nil {
		return Summary{}, err
	}
	if len(dbs) == 0 || dbs[0] != ProductDB {
		return Summary{}, fmt.Errorf("no %s in %s: not a wagraph data directory, or the server keeps its data in PostgreSQL (--database-url), which pg_dump backs up (docs/operations.md)", ProductDB, dataDir)
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	// The copies are staged beside the archive: that file system has room
	// for them (the archive goes there), /tmp may be a small tmpfs.
	stage, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".staging-*")
	if err != nil {
		return Summary{}, fmt.Errorf("make a staging directory beside %s: %w", path, err)
	}
	defer os.RemoveAll(stage)

	sum := Summary{Archive: path, DataDir: dataDir}
	if sum.Databases, err = copyDatabases(ctx, src, stage, dbs, held); err != nil {
		return Summary{}, err
	}
	log.Debug("backup: databases copied", "data_dir", dataDir, "databases", len(dbs), "took", time.Since(start))
	for _, name := range others.files {
		n, err := copyFile(filepath.Join(src, filepath.FromSlash(name)), filepath.Join(stage, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			// Removed since the directory was read (a blob the
			// simulated network let go): it is not in the backup.
			log.Debug("backup: a file went away before it was copied", "name", name)
			continue
		}
		if err != nil {
			return Summary{}, err
		}
		sum.Others = append(sum.Others, File{Name: name, Bytes: n})
	}
	for _, d := range sum.Databases {
		if err := quickCheck(ctx, filepath.Join(stage, filepath.FromSlash(d.Name))); err != nil {
			return Summary{}, fmt.Errorf("the copy of %s: %w", d.Name, err)
		}
	}
	entries := make([]entry, 0, len(dbs)+len(others.dirs)+len(others.files))
	for _, d := range dbs {
		entries = append(entries, entry{name: d})
	}
	for _, d := range others.dirs {
		entries = append(entries, entry{name: d, dir: true})
	}
	for _, f := range sum.Others {
		entries = append(entries, entry{name: f.Name})
	}
	if sum.ArchiveBytes, err = writeArchive(ctx, stage, entries, dest, path); err != nil {
		return Summary{}, err
	}
	log.Info("backup written", "archive", path, "bytes", sum.ArchiveBytes, "data_dir", dataDir,
		"databases", len(sum.Databases), "other_files", len(sum.Others), "took", time.Since(start))
	return sum, nil
}

// dataDirectory resolves the data directory (symbolic links too, so the
// check that the archive lies outside it sees the real place).
func dataDirectory(dataDir string) (string, error) {
	if dataDir == "" {
		return "", errors.New("no data directory given")
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("data directory %s is not a directory", dataDir)
	}
	return real, nil
}

// destination checks the archive's path: a new file, in a directory that
// exists, outside the data directory src (a backup there would be copied
// into the next one, and lost with the directory it was to save). It
// returns the path made absolute, its directory resolved.
func destination(src, dataDir, path string) (string, error) {
	if path == "" {
		return "", errors.New("no backup file given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("backup file %s: %w", path, err)
	}
	dir, base := filepath.Split(abs)
	if base == "" || base == "." || base == ".." {
		return "", fmt.Errorf("backup file %s: give a file name, not a directory", path)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("the directory of backup file %s: %w (create it first)", path, err)
	}
	if fi, err := os.Stat(realDir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the directory of backup file %s is not a directory", path)
	}
	if within(src, realDir) {
		return "", fmt.Errorf("backup file %s is inside the data directory %s: write it elsewhere (a backup there would be lost with the directory it saves)", path, dataDir)
	}
	dest := filepath.Join(realDir, base)
	if fi, err := os.Lstat(dest); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("backup file %s is a directory: give a file name in it", path)
		}
		return "", fmt.Errorf("backup file %s: %w: choose a new name, or remove it first", path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("backup file %s: %w", path, err)
	}
	return dest, nil
}

// within reports whether path is dir or lies under it (both cleaned and
// absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// plain are the other files and directories of a data directory, by
// slash-separated relative paths, directories before what they hold.
type plain struct {
	dirs, files []string
}

// scan lists what a backup takes from the data directory src: the SQLite
// databases (wagraph.db first, then whatsmeow.db, then the others by
// name) and the other regular files and directories.
func scan(src string, log *slog.Logger) (dbs []string, others plain, err error) {
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read the data directory: %w", err)
		}
		if p == src {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			others.dirs = append(others.dirs, name)
			return nil
		case skipped(d.Name()):
			return nil
		case !d.Type().IsRegular():
			log.Warn("backup: left out what is not a regular file", "name", name, "type", d.Type().String())
			return nil
		}
		db, err := isSQLite(p)
		if err != nil {
			return err
		}
		if db {
			dbs = append(dbs, name)
		} else {
			others.files = append(others.files, name)
		}
		return nil
	})
	if err != nil {
		return nil, plain{}, err
	}
	sortDatabases(dbs)
	return dbs, others, nil
}

// sortDatabases puts wagraph.db first, whatsmeow.db second, the others
// after by name.
func sortDatabases(names []string) {
	sort.Slice(names, func(i, j int) bool { return dbBefore(names[i], names[j]) })
}

// dbBefore orders databases: wagraph.db, whatsmeow.db, the others by name.
func dbBefore(a, b string) bool {
	rank := func(n string) int {
		switch n {
		case ProductDB:
			return 0
		case storeDB:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

// skipped names what a backup leaves out: SQLite's side files (a copy is
// whole without them), the data directory's lock, temporary files (a
// file written aside before a rename, half written).
func skipped(name string) bool {
	for _, suffix := range []string{"-wal", "-shm", "-journal", ".lock", ".tmp"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return strings.HasPrefix(name, ".tmp") || strings.Contains(name, ".tmp-") || strings.Contains(name, ".tmp.")
}

// copyFile copies a plain file as it is (whole: the server writes these
// aside and renames them into place, and an open file keeps the version
// it opened), into a new file of mode 0600, and returns its size.
func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, fmt.Errorf("copy %s: %w", src, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", src, err)
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", src, err)
	}
	return n, nil
}
