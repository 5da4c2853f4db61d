package datadir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wagraph/wagraph/internal/datadir"
)

// TestRestrict: every regular file of a data directory, at any depth, that
// group or others may read or write loses those bits, and is listed with
// the mode it had; private files, directories and links are left as they
// are. FindExposed lists the same files and changes nothing.
func TestRestrict(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	files := []struct {
		name       string
		mode, want fs.FileMode
	}{
		{"whatsmeow.db", 0o644, 0o600},
		{"wagraph.db-wal", 0o640, 0o600},
		{"wagraph.db", 0o600, 0o600},
		{"wagraph.lock", 0o604, 0o600},
		{"sandbox/state.json", 0o666, 0o600},
		{"sandbox/media/a", 0o400, 0o400},
		{"tool", 0o755, 0o700},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var want []datadir.Exposed
	for _, f := range files {
		if f.mode != f.want {
			want = append(want, datadir.Exposed{Path: filepath.Join(dir, f.name), Mode: f.mode})
		}
	}
	byPath := func(a, b datadir.Exposed) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(want, byPath)

	found, err := datadir.FindExposed(dir)
	slices.SortFunc(found, byPath)
	if err != nil || !slices.Equal(found, want) {
		t.Errorf("FindExposed: %v %v, want %v", found, err, want)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "whatsmeow.db")); fi.Mode().Perm() != 0o644 {
		t.Errorf("FindExposed changed a mode")
	}
	changed, err := datadir.Restrict(dir)
	slices.SortFunc(changed, byPath)
	if err != nil || !slices.Equal(changed, want) {
		t.Errorf("Restrict: %v %v, want %v", changed, err, want)
	}
	for _, f := range files {
		if fi, err := os.Stat(filepath.Join(dir, f.name)); err != nil || fi.Mode().Perm() != f.want {
			t.Errorf("%s (was %04o): %v %v, want %04o", f.name, f.mode, fi.Mode().Perm(), err, f.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "sandbox")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("a directory's mode changed: %v %v", fi.Mode(), err)
	}
	if again, err := datadir.Restrict(dir); err != nil || len(again) != 0 {
		t.Errorf("Restrict again: %v %v, want nothing to change", again, err)
	}
	if none, err := datadir.Restrict(filepath.Join(dir, "missing")); err != nil || len(none) != 0 {
		t.Errorf("Restrict of a missing directory: %v %v, want nothing", none, err)
	}
}

// TestPrivateSQLite: the database file is created 0600 whatever the umask,
// an existing one (and its -wal, -shm, -journal) made 0600, its content
// kept.
func TestPrivateSQLite(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, tt := range []struct {
		name     string
		existing map[string]fs.FileMode // suffix → mode
	}{
		{"new", nil},
		{"readable database and companions", map[string]fs.FileMode{"": 0o644, "-wal": 0o644, "-shm": 0o664, "-journal": 0o640}},
		{"private already", map[string]fs.FileMode{"": 0o600, "-wal": 0o600}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			for suffix, mode := range tt.existing {
				if err := os.WriteFile(path+suffix, []byte("content"), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path+suffix, mode); err != nil {
					t.Fatal(err)
				}
			}
			if err := datadir.PrivateSQLite(path); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				fi, err := os.Stat(path + suffix)
				_, had := tt.existing[suffix]
				switch {
				case suffix != "" && !had:
					if err == nil {
						t.Errorf("%s created, want only the database file created", suffix)
					}
				case err != nil:
					t.Errorf("x.db%s: %v", suffix, err)
				case fi.Mode().Perm() != 0o600:
					t.Errorf("x.db%s has mode %04o, want 0600", suffix, fi.Mode().Perm())
				case had && fi.Size() != int64(len("content")):
					t.Errorf("x.db%s: %d bytes, want its content kept", suffix, fi.Size())
				}
			}
		})
	}
}
