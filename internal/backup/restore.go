package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/datadir"
)

// Restore unpacks the backup archive into dataDir, which must be empty or
// not exist yet (it is created, mode 0700), and checks each database it
// unpacked with SQLite's quick_check. Run it with the server stopped, and
// start the server on dataDir after. On any error it leaves dataDir as it
// found it (empty, or absent). A nil log discards.
func Restore(ctx context.Context, archive, dataDir string, log *slog.Logger) (Summary, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	if dataDir == "" {
		return Summary{}, errors.New("no data directory given")
	}
	in, err := os.Open(archive)
	if err != nil {
		return Summary{}, fmt.Errorf("backup file %s: %w", archive, err)
	}
	defer in.Close()
	created, err := emptyTarget(dataDir)
	if err != nil {
		return Summary{}, err
	}
	ok := false
	defer func() {
		if !ok {
			undo(dataDir, created)
		}
	}()
	files, err := unpack(ctx, in, archive, dataDir)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Archive: archive, DataDir: dataDir, Restored: true}
	if fi, err := in.Stat(); err == nil {
		sum.ArchiveBytes = fi.Size()
	}
	for _, f := range files {
		p := filepath.Join(dataDir, filepath.FromSlash(f.Name))
		db, err := isSQLite(p)
		if err != nil {
			return Summary{}, err
		}
		if !db {
			sum.Others = append(sum.Others, f)
			continue
		}
		if err := quickCheck(ctx, p); err != nil {
			return Summary{}, fmt.Errorf("%s from %s: %w", f.Name, archive, err)
		}
		sum.Databases = append(sum.Databases, f)
	}
	sort.Slice(sum.Databases, func(i, j int) bool { return dbBefore(sum.Databases[i].Name, sum.Databases[j].Name) })
	if len(sum.Databases) == 0 || sum.Databases[0].Name != ProductDB {
		return Summary{}, fmt.Errorf("%s holds no %s: not a wagraph backup", archive, ProductDB)
	}
	if err := syncTree(dataDir); err != nil {
		return Summary{}, fmt.Errorf("sync %s: %w", dataDir, err)
	}
	ok = true
	log.Info("backup restored", "archive", archive, "data_dir", dataDir,
		"databases", len(sum.Databases), "other_files", len(sum.Others), "took", time.Since(start))
	return sum, nil
}

// emptyTarget makes sure dataDir is an empty directory: creating it (and
// saying so) when it does not exist, refusing it when it holds anything.
func emptyTarget(dataDir string) (created bool, err error) {
	fi, err := os.Stat(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dataDir, dirMode); err != nil {
			return false, fmt.Errorf("create data directory %s: %w", dataDir, err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("data directory %s is not a directory", dataDir)
	}
	names, err := readNames(dataDir)
	if err != nil {
		return false, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	if len(names) > 0 {
		sort.Strings(names)
		return false, fmt.Errorf("data directory %s is not empty (it holds %s): restore into an empty or new directory, never over a server's data", dataDir, listNames(names))
	}
	return false, nil
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// listNames names the first few of names.
func listNames(names []string) string {
	const shown = 3
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// undo takes back a failed restore: the directory it created, or what it
// put into the empty one it was given.
func undo(dataDir string, created bool) {
	if created {
		_ = os.RemoveAll(dataDir)
		return
	}
	names, _ := readNames(dataDir)
	for _, n := range names {
		_ = os.RemoveAll(filepath.Join(dataDir, n))
	}
}

// unpack writes the archive's files and directories under dataDir and
// returns the files. It takes regular files and directories with plain
// relative names only, each once: anything else is not a backup of ours,
// and must not write outside dataDir.
func unpack(ctx context.Context, in io.Reader, archive, dataDir string) ([]File, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, fmt.Errorf("%s is not a gzip-compressed backup: %w", archive, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var files []File
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", archive, err)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: not a wagraph backup", archive, err)
		}
		target := filepath.Join(dataDir, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, dirMode); err != nil {
				return nil, fmt.Errorf("restore %s: %w", name, err)
			}
		case tar.TypeReg:
			n, err := writeFile(target, tr)
			if err != nil {
				return nil, fmt.Errorf("restore %s from %s: %w", name, archive, err)
			}
			files = append(files, File{Name: name, Bytes: n})
		default:
			return nil, fmt.Errorf("%s: entry %q is neither a file nor a directory: not a wagraph backup", archive, hdr.Name)
		}
	}
	return files, nil
}

// entryName cleans an entry's name and refuses one that would land outside
// the data directory.
func entryName(raw string) (string, error) {
	name := path.Clean(strings.TrimSuffix(raw, "/"))
	if raw == "" || name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(raw, "\\") {
		return "", fmt.Errorf("entry %q is not a path inside the data directory", raw)
	}
	return name, nil
}

// writeFile writes a new file (never over one: an archive naming a file
// twice is refused) and syncs it.
func writeFile(target string, r io.Reader) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(target), dirMode); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// syncTree syncs every directory under root, root included, so the new
// names survive a crash.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return datadir.SyncDir(p)
		}
		return nil
	})
}
