package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToFileRefuses: a backup file inside the data directory (directly,
// deeper, or through a symbolic link), one that exists, one in a missing
// directory, and a data directory that is missing or holds no wagraph.db
// are refused with an error saying what is wrong and what to do, and
// nothing is written.
func TestToFileRefuses(t *testing.T) {
	dir, product, _ := makeDataDir(t)
	product.addN(t, 3)
	outside := t.TempDir()
	existing := filepath.Join(outside, "old.tar.gz")
	if err := os.WriteFile(existing, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link-to-data")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	noDB := t.TempDir()
	if err := os.WriteFile(filepath.Join(noDB, "wagraph.lock"), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dataDir, path string
		want                []string
		exist               bool // errors.Is(err, fs.ErrExist)
	}{
		{"in the data directory", dir, filepath.Join(dir, "b.tar.gz"), []string{"is inside the data directory", "write it elsewhere"}, false},
		{"deeper in it", dir, filepath.Join(dir, "sandbox", "b.tar.gz"), []string{"is inside the data directory"}, false},
		{"through a link", dir, filepath.Join(link, "b.tar.gz"), []string{"is inside the data directory"}, false},
		{"the data directory itself", dir, dir, []string{"is a directory", "give a file name"}, false},
		{"an existing file", dir, existing, []string{"already exists", "choose a new name"}, true},
		{"a missing directory", dir, filepath.Join(outside, "nope", "b.tar.gz"), []string{"no such file or directory", "create it first"}, false},
		{"a missing data directory", filepath.Join(outside, "nodata"), filepath.Join(outside, "b.tar.gz"), []string{"data directory", "no such file or directory"}, false},
		{"no wagraph.db", noDB, filepath.Join(outside, "b.tar.gz"), []string{"no wagraph.db in", "pg_dump"}, false},
		{"no file named", dir, "", []string{"no backup file given"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := listTree(t, outside)
			dataBefore := listTree(t, dir)
			_, err := ToFile(context.Background(), tt.dataDir, tt.path, nil)
			if err == nil {
				t.Fatalf("ToFile(%s, %s) succeeded", tt.dataDir, tt.path)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := errors.Is(err, fs.ErrExist); got != tt.exist {
				t.Errorf("errors.Is(%v, fs.ErrExist) = %v, want %v", err, got, tt.exist)
			}
			if after := listTree(t, outside); after != before {
				t.Errorf("the refused backup changed %s:\n%s\nwas:\n%s", outside, after, before)
			}
			if after := listTree(t, dir); after != dataBefore {
				t.Errorf("the refused backup changed the data directory:\n%s\nwas:\n%s", after, dataBefore)
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "an older backup" {
		t.Errorf("the existing file now holds %q (%v)", b, err)
	}
}

// listTree names what is under root, one path a line (links not followed).
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tarball builds a tar.gz of the given entries (a name ending in / is a
// directory; a "->" in the content makes a symbolic link to what follows).
func tarball(t *testing.T, entries [][2]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		name, content := e[0], e[1]
		hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(content)), Typeflag: tar.TypeReg}
		switch {
		case strings.HasSuffix(name, "/"):
			hdr.Typeflag, hdr.Size, hdr.Mode = tar.TypeDir, 0, 0o700
		case strings.HasPrefix(content, "->"):
			hdr.Typeflag, hdr.Size, hdr.Linkname = tar.TypeSymlink, 0, content[2:]
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "crafted.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestoreRefuses: a restore into a directory that holds anything is
// refused naming what it holds, and leaves it untouched; an archive that is
// not one of ours (not gzip, an entry outside the data directory, a link,
// a file twice, no wagraph.db, a damaged database) is refused and leaves
// the target as it was (absent, or empty), writing nothing outside it.
func TestRestoreRefuses(t *testing.T) {
	dir, product, _ := makeDataDir(t)
	product.addN(t, 3)
	good := filepath.Join(t.TempDir(), "good.tar.gz")
	if _, err := ToFile(context.Background(), dir, good, nil); err != nil {
		t.Fatal(err)
	}
	copied := t.TempDir()
	if _, err := Restore(context.Background(), good, copied, nil); err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(filepath.Join(copied, ProductDB)) // the live one is mostly in its -wal
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), db...)
	copy(damaged[4096:], bytes.Repeat([]byte{0xff}, len(damaged)-4096)) // every page but the first is garbage
	notGzip := filepath.Join(t.TempDir(), "plain.tar")
	if err := os.WriteFile(notGzip, []byte("not an archive"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a data directory that is not empty", func(t *testing.T) {
		before := listTree(t, dir)
		_, err := Restore(context.Background(), good, dir, nil)
		if err == nil || !strings.Contains(err.Error(), "is not empty (it holds notes.txt, sandbox, wagraph.db and") ||
			!strings.Contains(err.Error(), "restore into an empty or new directory") {
			t.Fatalf("restore over a data directory: %v; want a refusal naming what it holds", err)
		}
		if after := listTree(t, dir); after != before {
			t.Errorf("the refused restore changed the data directory:\n%s\nwas:\n%s", after, before)
		}
	})

	parent := t.TempDir()
	escape := filepath.Join(parent, "escaped")
	tests := []struct {
		name    string
		archive string
		want    string
	}{
		{"not gzip", notGzip, "is not a gzip-compressed backup"},
		{"an entry outside", tarball(t, [][2]string{{"wagraph.db", string(db)}, {"../escaped", "x"}}), `entry "../escaped" is not a path inside the data directory`},
		{"an absolute entry", tarball(t, [][2]string{{"/tmp/escaped", "x"}}), "is not a path inside the data directory"},
		{"a link", tarball(t, [][2]string{{"wagraph.db", string(db)}, {"sandbox", "->" + parent}}), `entry "sandbox" is neither a file nor a directory`},
		{"a file twice", tarball(t, [][2]string{{"wagraph.db", string(db)}, {"wagraph.db", string(db)}}), "file exists"},
		{"no wagraph.db", tarball(t, [][2]string{{"sandbox/", ""}, {"sandbox/network.json", "{}"}}), "holds no wagraph.db: not a wagraph backup"},
		{"a damaged database", tarball(t, [][2]string{{"wagraph.db", string(damaged)}}), "quick_check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, target := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
				_, existed := os.Stat(target)
				_, err := Restore(context.Background(), tt.archive, target, nil)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("restore of %s: %v; want an error saying %q", tt.name, err, tt.want)
				}
				names, rerr := readNames(target)
				switch {
				case existed == nil && (rerr != nil || len(names) != 0):
					t.Errorf("the empty target holds %v (%v) after the refused restore", names, rerr)
				case existed != nil && !errors.Is(rerr, fs.ErrNotExist):
					t.Errorf("the target the restore created is still there (%v, %v)", names, rerr)
				}
			}
			if _, err := os.Lstat(escape); err == nil {
				t.Fatalf("the archive wrote %s, outside the data directory", escape)
			}
		})
	}

	t.Run("a good archive into an empty directory", func(t *testing.T) {
		target := t.TempDir()
		sum, err := Restore(context.Background(), good, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ledgerState(t, filepath.Join(target, ProductDB)); got != 3 {
			t.Errorf("restored wagraph.db holds %d entries, want 3", got)
		}
		if !strings.HasPrefix(sum.String(), "restored "+good+" into "+target+": wagraph.db ") {
			t.Errorf("summary %q", sum)
		}
	})
}

// TestSummaryString: one line, sizes in binary units, the other files
// counted.
func TestSummaryString(t *testing.T) {
	tests := []struct {
		sum  Summary
		want string
	}{
		{Summary{Archive: "backup.tar.gz", ArchiveBytes: 1150000, Databases: []File{{"wagraph.db", 1258291}, {"whatsmeow.db", 307200}}, Others: []File{{"sandbox/network.json", 10}}},
			"wrote backup.tar.gz (1.1 MiB): wagraph.db 1.2 MiB, whatsmeow.db 300 KiB, 1 other file"},
		{Summary{Archive: "b.tgz", ArchiveBytes: 900, Databases: []File{{"wagraph.db", 4096}}},
			"wrote b.tgz (900 B): wagraph.db 4.0 KiB"},
		{Summary{Archive: "b.tgz", DataDir: "/data", Restored: true, Databases: []File{{"wagraph.db", 5 << 30}}, Others: []File{{"a", 1}, {"b", 2}}},
			"restored b.tgz into /data: wagraph.db 5.0 GiB, 2 other files"},
		{Summary{Archive: "b.tgz", ArchiveBytes: 2 << 20, Databases: []File{{"wagraph.db", 4096}},
			Others: []File{{"media/ab/cd/abcd", 1 << 20}, {"sandbox/network.json", 10}, {"media/ef/01/ef01", 1 << 20}}},
			"wrote b.tgz (2.0 MiB): wagraph.db 4.0 KiB, 2 kept media files 2.0 MiB, 1 other file"},
		{Summary{Archive: "b.tgz", ArchiveBytes: 900, Databases: []File{{"wagraph.db", 4096}}, Others: []File{{"media/ab/cd/abcd", 100}}},
			"wrote b.tgz (900 B): wagraph.db 4.0 KiB, 1 kept media file 100 B"},
	}
	for _, tt := range tests {
		if got := tt.sum.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestToFileCancelled: a backup whose context ends stops with the
// context's error and leaves nothing behind: no archive, no temporary file,
// no staged copies.
func TestToFileCancelled(t *testing.T) {
	dir, product, _ := makeDataDir(t)
	product.addN(t, 3)
	outside := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ToFile(ctx, dir, filepath.Join(outside, "b.tar.gz"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ToFile with its context ended: %v, want context.Canceled", err)
	}
	if names, err := readNames(outside); err != nil || len(names) != 0 {
		t.Errorf("the cancelled backup left %v (%v)", names, err)
	}
}
