package mediastore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediastore"
)

// TestLocal: bytes put come back whole under their SHA-256, with seeks;
// the same bytes twice are one file; a name that is not a SHA-256 is
// NOT_FOUND, never a path; Delete removes, twice is no error; Walk lists
// what is kept and never a half-written file.
func TestLocal(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "media")
	st, err := mediastore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("kept media "), 10000)
	want := sha256.Sum256(body)
	info, err := st.Put(ctx, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if info.SHA256 != hex.EncodeToString(want[:]) || info.Size != int64(len(body)) {
		t.Fatalf("Put: %+v, want %x of %d bytes", info, want, len(body))
	}
	if _, err := st.Put(ctx, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	obj, got, err := st.Open(ctx, info.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != info.Size {
		t.Errorf("Open size %d, want %d", got.Size, info.Size)
	}
	if _, err := obj.Seek(11, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(obj)
	obj.Close()
	if err != nil || !bytes.Equal(rest, body[11:]) {
		t.Errorf("read after a seek: %d bytes, %v", len(rest), err)
	}
	// A half file left by a crash is not listed.
	if err := os.WriteFile(filepath.Join(dir, ".tmp-put-123"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := st.Walk(ctx, func(i mediastore.Info) error { listed = append(listed, i.SHA256); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != info.SHA256 {
		t.Errorf("Walk: %v, want [%s]", listed, info.SHA256)
	}
	for _, name := range []string{"../../etc/passwd", strings.ToUpper(info.SHA256), ""} {
		if _, _, err := st.Open(ctx, name); fault.CodeOf(err) != fault.NotFound {
			t.Errorf("Open(%q): %v, want NOT_FOUND", name, err)
		}
	}
	for range 2 {
		if err := st.Delete(ctx, info.SHA256); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Open(ctx, info.SHA256); fault.CodeOf(err) != fault.NotFound {
		t.Errorf("Open after Delete: %v, want NOT_FOUND", err)
	}
}
