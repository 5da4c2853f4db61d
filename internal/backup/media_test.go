package backup

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/mediastore"
)

// TestLocalMediaStore: a backup holds every file of the local media store
// (<data-dir>/media), never one it was writing aside (a put or doctor's
// probe under way: ".tmp-" names), and a restore on a fresh directory
// gives the store back byte for byte: each file under its SHA-256, read
// through the store as the media route reads it.
func TestLocalMediaStore(t *testing.T) {
	ctx := context.Background()
	dir, product, _ := makeDataDir(t)
	product.addN(t, 10)
	st, err := mediastore.NewLocal(filepath.Join(dir, mediastore.DirName))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string][]byte{}
	for _, size := range []int{1, 4 << 10, 3<<20 + 7} { // a sticker, a voice note, a photo
		b := make([]byte, size)
		rand.Read(b)
		info, err := st.Put(ctx, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		kept[info.SHA256] = b
	}
	// What a crash (or a put under way) leaves aside.
	for _, name := range []string{".tmp-put-4242", ".tmp-check-77"} {
		if err := os.WriteFile(filepath.Join(dir, mediastore.DirName, name), []byte("half a file"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	sum, err := ToFile(ctx, dir, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "3 kept media files") {
		t.Errorf("summary %q does not count the kept media", sum)
	}
	names, contents := archiveEntries(t, out)
	for s, b := range kept {
		name := "media/" + s[:2] + "/" + s[2:4] + "/" + s
		if !bytes.Equal(contents[name], b) {
			t.Errorf("the archive's %s: %d bytes, want the %d kept", name, len(contents[name]), len(b))
		}
	}
	for _, n := range names {
		if strings.Contains(n, ".tmp-") {
			t.Errorf("the archive holds %s, a file written aside", n)
		}
	}

	fresh := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(ctx, out, fresh, nil); err != nil {
		t.Fatal(err)
	}
	back, err := mediastore.NewLocal(filepath.Join(fresh, mediastore.DirName))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := back.Walk(ctx, func(i mediastore.Info) error { listed = append(listed, i.SHA256); return nil }); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, len(kept))
	for s := range kept {
		want = append(want, s)
	}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("the restored store lists %v, want %v", listed, want)
	}
	for s, b := range kept {
		obj, info, err := back.Open(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		h := sha256.Sum256(got)
		if err != nil || !bytes.Equal(got, b) || info.Size != int64(len(b)) || hex.EncodeToString(h[:]) != s {
			t.Errorf("restored %s: %d bytes (%v), want the %d kept", s, len(got), err, len(b))
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(fresh, mediastore.DirName)); slices.ContainsFunc(entries, func(e os.DirEntry) bool {
		return strings.HasPrefix(e.Name(), ".tmp")
	}) {
		t.Errorf("the restored store holds a file written aside: %v", entries)
	}
}
