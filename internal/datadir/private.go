package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// The SQLite databases of a data directory (their -wal and -shm beside
// them): the product's tables, and whatsmeow's device store, which holds
// each linked device's keys.
const (
	ProductDB   = "wagraph.db"
	DeviceStore = "whatsmeow.db"
)

// PrivateMode is the mode of every file wagraph keeps in a data directory:
// they hold secrets (whatsmeow.db each linked device's keys, wagraph.db the
// tokens' hashes and the webhooks' secrets, the simulated network's root
// key), so no one but the server's user may read them, whatever the
// directory's own mode (one made beforehand is often 0755) or the umask.
const PrivateMode fs.FileMode = 0o600

// exposedBits are the mode bits that let a user other than the owner in.
const exposedBits fs.FileMode = 0o077

// sqliteCompanions are the files SQLite keeps beside a database: the
// write-ahead log and its index in WAL mode, the rollback journal
// otherwise. They hold the database's latest pages.
var sqliteCompanions = [...]string{"-wal", "-shm", "-journal"}

// PrivateSQLite makes the SQLite database file at path, and those SQLite
// keeps beside it (-wal, -shm, -journal) that exist, PrivateMode: the
// database file is created empty when missing (SQLite takes an empty file
// for an empty database). SQLite creates a database file 0644 less the
// umask, and its -wal and -shm with the database file's own mode: called
// before the database is opened, every file of it is private from the
// start; called again after, it sets their modes explicitly.
func PrivateSQLite(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, PrivateMode)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	// Explicitly: an existing file keeps its mode through OpenFile.
	err = f.Chmod(PrivateMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("make %s private (mode %04o): %w", path, PrivateMode, err)
	}
	for _, suffix := range sqliteCompanions {
		err := os.Chmod(path+suffix, PrivateMode)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make %s private (mode %04o): %w", path+suffix, PrivateMode, err)
		}
	}
	return nil
}

// Exposed is a file of a data directory that users other than its owner
// may read or write, and its mode.
type Exposed struct {
	Path string
	Mode fs.FileMode // permission bits only
}

// Private is the mode Restrict gives the file: its owner's bits alone.
func (e Exposed) Private() fs.FileMode { return e.Mode &^ exposedBits }

// FindExposed lists the regular files under dir (at any depth) whose mode
// lets users other than the owner in (group or other bits set). A missing
// dir has none. It changes nothing (`wagraph doctor`).
func FindExposed(dir string) ([]Exposed, error) {
	var found []Exposed
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories, and links: their targets are not the directory's
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile (a temporary file)
		}
		if err != nil {
			return err
		}
		if mode := fi.Mode().Perm(); mode&exposedBits != 0 {
			found = append(found, Exposed{Path: path, Mode: mode})
		}
		return nil
	})
	if err != nil {
		return found, fmt.Errorf("look at the files of data directory %s: %w", dir, err)
	}
	return found, nil
}

// Restrict takes the group and other bits off every regular file under
// dir that has any (FindExposed), and returns those it changed, with the
// mode each had: files of an earlier version, restored by hand or copied
// in, made before wagraph set their modes. A file it could not change is
// in the error, the others are changed all the same.
func Restrict(dir string) ([]Exposed, error) {
	found, err := FindExposed(dir)
	var changed []Exposed
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range found {
		if err := os.Chmod(e.Path, e.Private()); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("make %s private: %w", e.Path, err))
			}
			continue
		}
		changed = append(changed, e)
	}
	return changed, errors.Join(errs...)
}

// RestrictReporting takes the group and other bits off the files of the
// data directory dir that have them (Restrict), saying so in log for each: the
// files of an earlier version (SQLite made them 0644 less the umask) or
// copied in. One it cannot change is a warning, not a reason to stop.
func RestrictReporting(dir string, log *slog.Logger) {
	changed, err := Restrict(dir)
	for _, e := range changed {
		log.Warn("a data directory file was open to users other than its owner: made private",
			"file", e.Path, "mode_was", fmt.Sprintf("%04o", e.Mode), "mode", fmt.Sprintf("%04o", e.Private()))
	}
	if err != nil {
		log.Warn("the data directory's files could not all be made private: other users may read them", "data_dir", dir, "err", err)
	}
}
