package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/wagraph/wagraph/internal/storage"
)

// TestPostgresWhere: a URL is named by host, port and database, never its
// user or password, whatever its form.
func TestPostgresWhere(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"postgres://u:hunter2@db.example:5432/wagraph?sslmode=require", "PostgreSQL db.example:5432/wagraph"},
		{"postgresql://db/wg", "PostgreSQL db/wg"},
		{"postgres://u:p%40ss@[::1]:5433/x#frag", "PostgreSQL [::1]:5433/x"},
		{"postgres://u:p@ss@h/x", "PostgreSQL h/x"},
		{"postgres://u:hunter2@h/%zz", "PostgreSQL (an unreadable URL)"},
	} {
		got := storage.PostgresWhere(tt.url)
		if got != tt.want {
			t.Errorf("PostgresWhere(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, "hunter2") || strings.Contains(got, "u:") {
			t.Errorf("PostgresWhere(%q) = %q shows the credentials", tt.url, got)
		}
	}
}

// TestOpenSQLite: without a URL the database is wagraph.db in the data
// directory, created with it (0700), in WAL mode, migrated, and opened
// again as it was left.
func TestOpenSQLite(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "data")
	d, err := storage.Open(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Dialect != dialect.SQLite || d.Where != filepath.Join(dir, "wagraph.db") {
		t.Errorf("opened %s at %s", d.Dialect, d.Where)
	}
	d.Ent.User.Create().SetID("u1").SetName("alice").ExecX(ctx)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v %v, want mode 700", fi, err)
	}
	var mode string
	if err := d.SQL.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q (%v), want wal", mode, err)
	}
	d.Close()
	again, err := storage.Open(ctx, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := again.Ent.User.Query().CountX(ctx); n != 1 {
		t.Errorf("%d users after reopening, want 1", n)
	}
}

// TestOpenSQLiteUnusableDirectory: a data directory SQLite could not
// write in is reported with its cause and what to do, before SQLite
// reports it as a missing file.
func TestOpenSQLiteUnusableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "data")
	_, err := storage.Open(context.Background(), dir, "")
	if err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	for _, want := range []string{"data directory " + dir, "not a directory", "choose another --data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "unable to open database file") {
		t.Errorf("%q is SQLite's misleading message", err)
	}
}

// TestOpenSQLiteFilesArePrivate (issue 31): the database's files are 0600
// whatever the umask (022 here, the usual one, under which SQLite made them
// 0644) and the mode of a data directory made beforehand (0755): they hold
// the tokens' hashes and the webhooks' secrets. A database file another
// version left readable is made private when opened.
func TestOpenSQLiteFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, tt := range []struct {
		name     string
		existing bool // a database file is there already, 0644
	}{
		{"a new database", false},
		{"a database left readable", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.existing {
				if err := os.WriteFile(filepath.Join(dir, "wagraph.db"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := storage.Open(context.Background(), dir, "")
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			d.Ent.User.Create().SetID("u1").SetName("alice").ExecX(context.Background()) // the WAL written
			for _, name := range []string{"wagraph.db", "wagraph.db-wal", "wagraph.db-shm"} {
				fi, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %04o, want 0600", name, fi.Mode().Perm())
				}
			}
		})
	}
}
