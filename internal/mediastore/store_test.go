package mediastore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/mediastore/s3test"
)

// store is the method set both stores offer (the keeper and the media
// route are written against it).
type store interface {
	Put(ctx context.Context, r io.Reader) (mediastore.Info, error)
	Open(ctx context.Context, sum string) (mediastore.Object, mediastore.Info, error)
	Delete(ctx context.Context, sum string) error
	Walk(ctx context.Context, fn func(mediastore.Info) error) error
	Check(ctx context.Context) error
}

var (
	_ store = (*mediastore.Local)(nil)
	_ store = (*mediastore.S3)(nil)
)

// stores makes each kind of store, fresh, for one test.
var stores = []struct {
	name string
	make func(t *testing.T) store
}{
	{"local", func(t *testing.T) store {
		st, err := mediastore.NewLocal(filepath.Join(t.TempDir(), "media"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"s3", func(t *testing.T) store {
		endpoint, bucket := s3test.Start(t)
		st, err := mediastore.NewS3(mediastore.S3Config{Bucket: bucket, Prefix: "media/", Endpoint: endpoint,
			Region: s3test.Region, SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestStores runs one table of behaviours against each store: what the
// keeper and the media route rely on holds alike for a directory and a
// bucket.
func TestStores(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 20<<10) // 320 KiB: several reads
	small := []byte("a voice note")
	tests := []struct {
		name string
		run  func(t *testing.T, st store)
	}{
		{"put then open gives the bytes back under their sha256", func(t *testing.T, st store) {
			info, err := st.Put(ctx, bytes.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			if info.SHA256 != sumOf(big) || info.Size != int64(len(big)) || info.ModTime.IsZero() {
				t.Fatalf("Put: %+v, want %s of %d bytes with a time", info, sumOf(big), len(big))
			}
			obj, got, err := st.Open(ctx, info.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			if got.SHA256 != info.SHA256 || got.Size != info.Size {
				t.Errorf("Open info %+v, want %+v", got, info)
			}
			b, err := io.ReadAll(obj)
			if err != nil || !bytes.Equal(b, big) {
				t.Errorf("read %d bytes (%v), want the %d put", len(b), err, len(big))
			}
		}},
		{"the same bytes twice are one file", func(t *testing.T, st store) {
			a, err := st.Put(ctx, bytes.NewReader(small))
			if err != nil {
				t.Fatal(err)
			}
			b, err := st.Put(ctx, bytes.NewReader(small))
			if err != nil {
				t.Fatal(err)
			}
			if a.SHA256 != b.SHA256 || b.Size != int64(len(small)) || b.ModTime.Before(a.ModTime) {
				t.Errorf("second Put %+v after %+v", b, a)
			}
			if got := walk(t, st); !slices.Equal(got, []string{a.SHA256}) {
				t.Errorf("Walk: %v, want one file", got)
			}
		}},
		{"an empty file is kept", func(t *testing.T, st store) {
			info, err := st.Put(ctx, bytes.NewReader(nil))
			if err != nil {
				t.Fatal(err)
			}
			obj, got, err := st.Open(ctx, info.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			obj.Close()
			if info.SHA256 != sumOf(nil) || got.Size != 0 {
				t.Errorf("empty: %+v / %+v", info, got)
			}
		}},
		{"seeks read from where they point", func(t *testing.T, st store) {
			info, err := st.Put(ctx, bytes.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			obj, _, err := st.Open(ctx, info.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			for _, off := range []int64{100_001, 7, int64(len(big)) - 5} {
				if n, err := obj.Seek(off, io.SeekStart); err != nil || n != off {
					t.Fatalf("Seek(%d): %d, %v", off, n, err)
				}
				b := make([]byte, 5)
				if _, err := io.ReadFull(obj, b); err != nil || !bytes.Equal(b, big[off:off+5]) {
					t.Errorf("at %d read %q (%v), want %q", off, b, err, big[off:off+5])
				}
			}
			if n, err := obj.Seek(-16, io.SeekEnd); err != nil || n != int64(len(big))-16 {
				t.Fatalf("Seek from the end: %d, %v", n, err)
			}
			rest, err := io.ReadAll(obj)
			if err != nil || !bytes.Equal(rest, big[len(big)-16:]) {
				t.Errorf("the last 16 bytes: %q, %v", rest, err)
			}
		}},
		{"delete removes, twice is no error", func(t *testing.T, st store) {
			info, err := st.Put(ctx, bytes.NewReader(small))
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := st.Delete(ctx, info.SHA256); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := st.Open(ctx, info.SHA256); fault.CodeOf(err) != fault.NotFound {
				t.Errorf("Open after Delete: %v, want NOT_FOUND", err)
			}
			if got := walk(t, st); len(got) != 0 {
				t.Errorf("Walk after Delete: %v", got)
			}
		}},
		{"walk lists every kept file and stops when told", func(t *testing.T, st store) {
			var want []string
			for i := range 5 {
				info, err := st.Put(ctx, strings.NewReader(strings.Repeat("x", i+1)))
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, info.SHA256)
			}
			slices.Sort(want)
			if got := walk(t, st); !slices.Equal(got, want) {
				t.Errorf("Walk: %v, want %v", got, want)
			}
			stop := errors.New("enough")
			calls := 0
			err := st.Walk(ctx, func(mediastore.Info) error { calls++; return stop })
			if !errors.Is(err, stop) || calls != 1 {
				t.Errorf("Walk stopped by fn: %v after %d calls", err, calls)
			}
		}},
		{"a name that is not a sha256 is NOT_FOUND, never a path", func(t *testing.T, st store) {
			info, err := st.Put(ctx, bytes.NewReader(small))
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"", "../../etc/passwd", strings.ToUpper(info.SHA256), info.SHA256[:63],
				info.SHA256 + "0", "../" + info.SHA256[3:], sumOf([]byte("never put"))} {
				if _, _, err := st.Open(ctx, name); fault.CodeOf(err) != fault.NotFound {
					t.Errorf("Open(%q): %v, want NOT_FOUND", name, err)
				}
				if err := st.Delete(ctx, name); err != nil {
					t.Errorf("Delete(%q): %v", name, err)
				}
			}
			if got := walk(t, st); !slices.Equal(got, []string{info.SHA256}) {
				t.Errorf("Walk after deletes of other names: %v", got)
			}
		}},
		{"check writes, reads and deletes a probe", func(t *testing.T, st store) {
			kept, err := st.Put(ctx, bytes.NewReader(small))
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Check(ctx); err != nil {
				t.Fatal(err)
			}
			if got := walk(t, st); !slices.Equal(got, []string{kept.SHA256}) {
				t.Errorf("after Check the store holds %v, want only the kept file", got)
			}
		}},
		{"a cancelled put keeps nothing", func(t *testing.T, st store) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := st.Put(cctx, bytes.NewReader(big)); !errors.Is(err, context.Canceled) {
				t.Errorf("Put with a cancelled context: %v", err)
			}
			if got := walk(t, st); len(got) != 0 {
				t.Errorf("Walk: %v", got)
			}
		}},
	}
	for _, kind := range stores {
		t.Run(kind.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { tt.run(t, kind.make(t)) })
			}
		})
	}
}

func walk(t *testing.T, st store) []string {
	t.Helper()
	var got []string
	if err := st.Walk(context.Background(), func(i mediastore.Info) error {
		got = append(got, i.SHA256)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestNew: the store the settings chose, nil for none, and an error (with
// no store, not a nil one in an interface) when it cannot be opened.
func TestNew(t *testing.T) {
	endpoint, bucket := s3test.Start(t)
	dir := filepath.Join(t.TempDir(), "media")
	local, err := mediastore.New(mediastore.Choice{Kind: mediastore.KindLocal, Dir: dir})
	if l, ok := local.(*mediastore.Local); err != nil || !ok || l.Dir() != dir {
		t.Errorf("local: %v, %v", local, err)
	}
	s3, err := mediastore.New(mediastore.Choice{Kind: mediastore.KindS3, S3: mediastore.S3Config{Bucket: bucket, Endpoint: endpoint}})
	if _, ok := s3.(*mediastore.S3); err != nil || !ok {
		t.Errorf("s3: %v, %v", s3, err)
	}
	if none, err := mediastore.New(mediastore.Choice{Kind: mediastore.KindNone}); none != nil || err != nil {
		t.Errorf("none: %v, %v", none, err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	for _, c := range []mediastore.Choice{
		{Kind: "disk"},
		{Kind: mediastore.KindLocal, Dir: "/proc/no-media-here"},
		{Kind: mediastore.KindS3, S3: mediastore.S3Config{Bucket: bucket, Endpoint: endpoint}},
	} {
		if st, err := mediastore.New(c); st != nil || err == nil {
			t.Errorf("New(%+v) = %v, %v; want no store and an error", c, st, err)
		}
	}
}

// TestLocalCheckLeavesNothing: doctor's probe leaves the directory as it
// found it (no file, no shard directory), and fails on a directory it
// cannot write.
func TestLocalCheckLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "media")
	st, err := mediastore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, strings.NewReader("kept")); err != nil {
		t.Fatal(err)
	}
	tree := func() []string {
		var names []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error { names = append(names, p); return nil })
		return names
	}
	before := tree()
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if after := tree(); !slices.Equal(before, after) {
		t.Errorf("Check changed the directory:\n%v\n%v", before, after)
	}
	if os.Geteuid() == 0 {
		return // root writes anywhere
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if err := st.Check(ctx); err == nil || !strings.Contains(err.Error(), "write a probe") {
		t.Errorf("Check of a read-only directory: %v", err)
	}
}
